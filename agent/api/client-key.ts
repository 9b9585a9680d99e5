// The client key of a request (api.md §14): the rate limiter's bucket key, also used for the
// per-client caps on tunnels, event streams and SSH gateway sessions.

import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

/**
 * Client IP: the TCP peer; only a loopback peer (a local reverse proxy) is trusted to forward —
 * the rightmost `X-Forwarded-For` entry, else `X-Real-IP`, else the peer.
 */
export function clientIp(request: FastifyRequest): string {
  const peer = request.raw.socket.remoteAddress ?? '';
  if (!isLoopback(peer)) return peer;
  const xff = request.headers['x-forwarded-for'];
  const xffText = Array.isArray(xff) ? xff.join(',') : xff;
  if (xffText !== undefined) {
    const last = xffText.slice(xffText.lastIndexOf(',') + 1).trim();
    if (last !== '') return isIP(last) ? last : peer;
  }
  const real = request.headers['x-real-ip'];
  const realText = (Array.isArray(real) ? real[0] : real)?.trim();
  if (realText) return isIP(realText) ? realText : peer;
  return peer;
}

/** IPv4 → itself; IPv4-mapped IPv6 → the IPv4 address; other IPv6 → its /64 prefix. */
export function keyOfIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIP(ip) !== 6) return ip;
  return `${expandIpv6(ip).slice(0, 4).join(':')}::/64`;
}

export function clientKey(request: FastifyRequest): string {
  return keyOfIp(clientIp(request));
}

/** The eight 16-bit groups of an IPv6 address, lowercase, without leading zeros. */
function expandIpv6(ip: string): string[] {
  const zone = ip.indexOf('%');
  const addr = (zone < 0 ? ip : ip.slice(0, zone)).toLowerCase();
  const [head, tail] = addr.includes('::') ? addr.split('::') : [addr, undefined];
  const parse = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const headGroups = parse(head);
  const tailGroups = parse(tail);
  // An embedded IPv4 tail occupies two groups.
  const last = tailGroups.length > 0 ? tailGroups : headGroups;
  if (last.length > 0 && last[last.length - 1]!.includes('.')) {
    const v4 = last.pop()!.split('.').map(Number);
    last.push(((v4[0]! << 8) | v4[1]!).toString(16), ((v4[2]! << 8) | v4[3]!).toString(16));
  }
  const missing = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return groups.map((g) => parseInt(g, 16).toString(16));
}
