// Taking a connection away from node's HTTP server for `POST /tunnel/{leaseHash}/tcp` (api.md §8.3
// step 10). Node's parser would read the tunnel's first bytes as a pipelined HTTP request (and
// answer `400`), and its end/timeout handlers would close a half-closed or quiet socket. So:
//
// * `enableTunnelTakeover(server)` has node hand over a tunnel request's connection at the end of
//   its head, the way it hands over an `Upgrade` request: the request is still served as usual
//   (fastify runs the route), but the parser is told the head ends the HTTP part of the connection
//   (llhttp's "no body, upgrade" answer), so it stops there, node detaches the socket from its HTTP
//   machinery and passes on the bytes the client sent behind the head. Every other request is
//   parsed as before, by node's native parser straight from the socket.
// * `takeOverSocket(request)` then hands the socket and those bytes to the tunnel. A request that
//   was not handed over (one that declares a body, or a server without `enableTunnelTakeover`)
//   cannot be taken over: the route answers `500 hijacking not supported` (step 9).
//
// This uses node internals (the per-connection parser's `onIncoming`, and the `upgrade` flag its
// result is read with); without them no connection is handed over and tunnels answer step 9.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const TUNNEL_PATH_RE = /^\/tunnel\/[^/?]+\/tcp(?:\?|$)/;
/** llhttp's answer to a complete head: no body, and the connection leaves HTTP after it. */
const HEAD_ENDS_HTTP = 2;

type OnIncoming = (req: IncomingMessage, keepAlive: boolean) => number;

/** Tunnel requests being handed over (marked before node emits them). */
const tunnelRequests = new WeakSet<IncomingMessage>();
/** What a handed-over connection received until the tunnel takes it: bytes behind the head, EOF. */
interface Held {
  chunks: Buffer[];
  ended: boolean;
}

/** Sockets node handed over, with what they received since. */
const handedOver = new WeakMap<Socket, Held>();
const takeoverHooks = new WeakMap<Socket, () => void>();

/** Run `release` when the socket is taken over (before the tunnel writes to it): undo a wrapper of its writes. */
export function onTakeover(socket: Socket, release: () => void): void {
  takeoverHooks.set(socket, release);
}

function isTunnelRequest(req: IncomingMessage): boolean {
  // A tunnel client sends no body: bytes after its head are the tunnel's. A request that declares a
  // body is plain HTTP, and cannot become a tunnel.
  return req.method === 'POST' && req.url !== undefined && TUNNEL_PATH_RE.test(req.url) && !declaresBody(req);
}

function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function enableTunnelTakeover(server: Server): void {
  // Node emits `upgrade` for a request whose head ended the HTTP part of its connection.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!tunnelRequests.has(req)) {
      socket.destroy(); // not ours (cannot happen: every other request is parsed as plain HTTP)
      return;
    }
    // Kept until the tunnel takes the socket: an earlier pipelined request that finishes meanwhile
    // resumes the socket (node drains a request's unread body), so later bytes and EOF would be
    // emitted to no one.
    const held: Held = { chunks: [head], ended: false };
    handedOver.set(socket, held);
    socket.pause();
    socket.on('data', (chunk: Buffer) => held.chunks.push(chunk));
    socket.on('end', () => (held.ended = true));
  });

  // Runs synchronously while the parser completes the head, before the route sees the request.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    // Answered instead of taken over (refused by any step): nothing after it is HTTP, so close.
    if (tunnelRequests.has(req)) res.once('finish', () => req.socket.end());
  });

  // Appended: runs after node's connection listener attached its parser.
  server.on('connection', (socket: Socket) => {
    const parser = (socket as Socket & { parser?: { onIncoming?: unknown } }).parser;
    if (typeof parser?.onIncoming !== 'function') return;
    const onIncoming = parser.onIncoming as OnIncoming;
    parser.onIncoming = (req: IncomingMessage, keepAlive: boolean): number => {
      const tunnel = isTunnelRequest(req);
      // Node treats a request asking for an upgrade as one when the server has `upgrade`
      // listeners, as it now has: every request is served as plain HTTP, as without the listener.
      (req as IncomingMessage & { upgrade: boolean }).upgrade = false;
      if (tunnel) tunnelRequests.add(req);
      const answer = onIncoming(req, keepAlive);
      if (!tunnel || answer !== 0) return answer;
      (req as IncomingMessage & { upgrade: boolean }).upgrade = true;
      return HEAD_ENDS_HTTP;
    };
  });
}

export interface TakenSocket {
  socket: Socket;
  /** Bytes the client sent after the request head, in order. */
  head: Buffer;
  /** The client had already half-closed. */
  ended: boolean;
}

/**
 * Detach the request's socket from the HTTP server; null when the connection was not handed over
 * at the request's head, or is already gone.
 */
export function takeOverSocket(req: IncomingMessage): TakenSocket | null {
  const socket = req.socket;
  const held = socket ? handedOver.get(socket) : undefined;
  if (!socket || held === undefined || socket.destroyed) return null;
  handedOver.delete(socket);
  takeoverHooks.get(socket)?.();
  takeoverHooks.delete(socket);
  for (const event of ['data', 'end', 'timeout', 'drain', 'error'] as const) socket.removeAllListeners(event);
  socket.setTimeout(0);
  socket.setNoDelay(true);
  return { socket, head: Buffer.concat(held.chunks), ended: held.ended };
}
