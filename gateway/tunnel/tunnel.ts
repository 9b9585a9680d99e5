// `POST /tunnel/{leaseHash}/tcp` (api.md §8.3, provider.md §7.1): checks in the documented order,
// then the raw `200 OK` line and a byte pipe to the VM's SSH server — directly when this node is the
// lease's provider, otherwise through the provider's `/net/tunnel/2.0.0`.

import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Route } from '../../agent/api/route.js';
import { stringifyJson } from '../../ledger/codec/json.js';
import { hexToBytes, isHash } from '../../ledger/codec/hex.js';
import { verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import { IDLE_LIMIT_MS, type LeaseAccess, type LeaseAccessRecord, type RemoteTunnelDialer, type VmEndpoint } from '../lease-access.js';
import { pipeBoth } from '../pipe.js';
import { TunnelRegistry, type TunnelSlot } from './registry.js';
import { takeOverSocket } from './takeover.js';

export const TUNNEL_OK = 'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n';
const VM_DIAL_TIMEOUT_MS = 10_000;
const RETRY_AFTER_S = '5';

export interface TunnelDeps {
  access: LeaseAccess;
  /** Used when another node provides the lease (the `Network` port, adapted). */
  remote: RemoteTunnelDialer;
  /** The rate limiter's client key of a request (api.md §14). */
  clientKey: (request: FastifyRequest) => string;
  logger: Logger;
  registry?: TunnelRegistry;
  metrics?: Registry;
  /** Close a tunnel after this long without a byte (default 1 hour). */
  idleMs?: number;
}

class TunnelRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function tunnelRoute(deps: TunnelDeps): Route {
  const registry = deps.registry ?? new TunnelRegistry();
  const idleMs = deps.idleMs ?? IDLE_LIMIT_MS;
  if (deps.metrics) {
    new Gauge({
      name: 'net_tunnels_open',
      help: 'Open TCP tunnels (POST /tunnel/{leaseHash}/tcp)',
      registers: [deps.metrics],
      collect() {
        this.set(registry.open);
      },
    });
  }

  /** Steps 1–8 of api.md §8.3: a reserved slot and the open relay, or a TunnelRefused. */
  async function open(request: FastifyRequest, leaseHash: string): Promise<{ slot: TunnelSlot; upstream: Duplex }> {
    const { lease, signature } = checkRequest(deps.access, leaseHash, request.headers['x-signature']);
    const slot = registry.reserve(deps.clientKey(request), leaseHash);
    if (slot === 'client cap') throw new TunnelRefused(429, 'too many tunnels from this client', { 'Retry-After': RETRY_AFTER_S });
    if (slot === 'node cap') throw new TunnelRefused(503, 'too many tunnels', { 'Retry-After': RETRY_AFTER_S });
    try {
      const upstream =
        lease.provider === deps.access.localProvider
          ? await dialVm(await deps.access.vmEndpoint(leaseHash))
          : await deps.remote.open(lease.provider, leaseHash, signature);
      return { slot, upstream };
    } catch (err) {
      slot.release();
      throw new TunnelRefused(502, `tunnel error: ${(err as Error).message}`);
    }
  }

  function refuse(reply: FastifyReply, err: TunnelRefused): FastifyReply {
    for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
    // Nothing after a refused tunnel request is HTTP: do not read another request from it.
    reply.header('Connection', 'close');
    // A Buffer body keeps the content type exactly `application/json`, as on every API answer.
    return reply.code(err.status).header('content-type', 'application/json').send(Buffer.from(stringifyJson({ error: err.message }) + '\n'));
  }

  async function handler(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const leaseHash = leaseHashOf(request);
    let relay: { slot: TunnelSlot; upstream: Duplex };
    try {
      relay = await open(request, leaseHash);
    } catch (err) {
      if (!(err instanceof TunnelRefused)) throw err;
      return refuse(reply, err);
    }

    const { slot, upstream } = relay;
    const taken = takeOverSocket(request.raw);
    if (!taken) {
      slot.release();
      upstream.destroy();
      // Step 9: a connection that was not handed over at the request head (the request declared a
      // body) cannot become a tunnel. A connection already gone needs no answer.
      if (!request.raw.socket.destroyed) return refuse(reply, new TunnelRefused(500, 'hijacking not supported'));
      reply.hijack();
      return reply;
    }
    reply.hijack();
    taken.socket.write(TUNNEL_OK);
    slot.onClose = () => {
      taken.socket.destroy();
      upstream.destroy();
    };
    deps.logger.info({ lease: leaseHash.slice(0, 12), client: deps.clientKey(request) }, 'tunnel opened');
    pipeBoth(taken.socket, upstream, {
      idleMs,
      headOfA: taken.head,
      aEnded: taken.ended,
      onClose: () => {
        slot.release();
        deps.logger.info({ lease: leaseHash.slice(0, 12) }, 'tunnel closed');
      },
    });
    return reply;
  }

  return {
    method: 'POST',
    path: '/tunnel/{leaseHash}/tcp',
    description: 'Raw TCP tunnel to the leased VM\'s SSH server (header X-Signature)',
    body: 'none',
    handler,
  };
}

/** Steps 1–6 of api.md §8.3; the lease and the raw signature bytes (handed on to a relay). */
function checkRequest(
  access: LeaseAccess,
  leaseHash: string,
  header: string | string[] | undefined,
): { lease: LeaseAccessRecord; signature: Uint8Array } {
  if (!isHash(leaseHash)) throw new TunnelRefused(400, 'invalid lease hash');
  const lease = access.lease(leaseHash);
  if (!lease) throw new TunnelRefused(404, 'lease not found');
  if (lease.state !== 'accepted') throw new TunnelRefused(410, 'lease not active');
  if (!lease.accessPubKey) throw new TunnelRefused(403, 'lease has no access key');
  const signature = Array.isArray(header) ? header[0] : header;
  if (signature === undefined) throw new TunnelRefused(401, 'missing X-Signature header');
  if (!verifyEd25519(lease.accessPubKey, hexToBytes(leaseHash), signature)) {
    throw new TunnelRefused(403, 'signature verification failed');
  }
  return { lease, signature: hexToBytes(signature) };
}

function leaseHashOf(request: FastifyRequest): string {
  const fromParams = (request.params as Record<string, string> | undefined)?.leaseHash;
  if (typeof fromParams === 'string') return fromParams;
  return request.url.split('?')[0]!.split('/')[2] ?? '';
}

/** The VM's SSH server (provider.md §7.2 step 4 messages). */
async function dialVm(endpoint: VmEndpoint | null): Promise<Socket> {
  if (!endpoint) throw new Error('vm not found');
  return await new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: endpoint.host, port: endpoint.port, allowHalfOpen: true, noDelay: true });
    const fail = (detail: string) => {
      socket.destroy();
      reject(new Error(`vm dial failed: ${detail}`));
    };
    socket.setTimeout(VM_DIAL_TIMEOUT_MS, () => fail('timeout'));
    socket.once('error', (err) => fail(err.message));
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeAllListeners('error');
      socket.on('error', () => {}); // the pipe's own handler takes over
      resolve(socket);
    });
  });
}
