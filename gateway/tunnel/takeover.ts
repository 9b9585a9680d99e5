// Taking a connection away from node's HTTP server for `POST /tunnel/{leaseHash}/tcp` (api.md §8.3
// step 10). Node's parser would read the tunnel's first bytes as a pipelined HTTP request (and
// answer `400`), and its end/timeout handlers would close a half-closed or quiet socket. So:
//
// * `enableTunnelTakeover(server)` runs the parser over JS `data` events and feeds it each chunk cut
//   at every end of a header block (`\r\n\r\n`). A tunnel request completes exactly at such a cut;
//   from there on the connection's bytes are held back from the parser and kept for the tunnel.
// * `takeOverSocket(request)` detaches the socket from the HTTP machinery and hands back those
//   bytes. Without `enableTunnelTakeover` it still detaches, but bytes that arrive together with the
//   request head reach the parser first (which answers `400` and closes): only clients that wait for
//   the `200` before sending would work. The daemon must call `enableTunnelTakeover` on its server.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const HEAD_END = Buffer.from('\r\n\r\n');
const TUNNEL_PATH_RE = /^\/tunnel\/[^/?]+\/tcp(?:\?|$)/;

interface HeldBytes {
  /** Set while parsing a tunnel request: the parser gets no further byte of this connection. */
  held: boolean;
  chunks: Buffer[];
  ended: boolean;
  /** The last bytes fed to the parser, to find a `\r\n\r\n` split across chunks. */
  tail: Buffer;
  /** Node's own `data` and `end` listeners, which now receive bytes through us. */
  httpOnData: ((chunk: Buffer) => void)[];
  httpOnEnd: (() => void)[];
}

const heldBySocket = new WeakMap<Socket, HeldBytes>();
const takeoverHooks = new WeakMap<Socket, () => void>();

/** Run `release` when the socket is taken over (before the tunnel writes to it): undo a wrapper of its writes. */
export function onTakeover(socket: Socket, release: () => void): void {
  takeoverHooks.set(socket, release);
}

function isTunnelRequest(method: string | undefined, url: string | undefined): boolean {
  return method === 'POST' && url !== undefined && TUNNEL_PATH_RE.test(url);
}

export function enableTunnelTakeover(server: Server): void {
  // Runs synchronously while the parser completes the head, before it reads any later byte.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = heldBySocket.get(req.socket);
    // A tunnel client sends no HTTP body: bytes after its head are the tunnel's. A request that
    // declares a body is plain HTTP (it can only be refused) and is parsed as usual.
    if (!state || !isTunnelRequest(req.method, req.url) || declaresBody(req)) return;
    state.held = true;
    // Answered instead of taken over (refused by any step): nothing after it is HTTP, so close.
    res.once('finish', () => {
      if (heldBySocket.get(req.socket) === state) req.socket.end();
    });
  });

  // Appended: runs after node's connection listener attached its parser and listeners.
  server.on('connection', (socket: Socket) => {
    const state: HeldBytes = {
      held: false,
      chunks: [],
      ended: false,
      tail: Buffer.alloc(0),
      httpOnData: socket.listeners('data') as ((chunk: Buffer) => void)[],
      // net's own end listener (half-open bookkeeping) stays; the HTTP server's is wrapped.
      httpOnEnd: (socket.listeners('end') as (() => void)[]).filter((l) => l.name !== 'onReadableStreamEnd'),
    };
    heldBySocket.set(socket, state);
    for (const l of state.httpOnData) socket.removeListener('data', l);
    for (const l of state.httpOnEnd) socket.removeListener('end', l);
    const feed = (piece: Buffer) => {
      if (piece.length === 0) return;
      for (const l of state.httpOnData) l.call(socket, piece);
    };
    // Adding a `data` listener makes node stop consuming the socket natively (JS data path).
    socket.on('data', (chunk: Buffer) => {
      if (state.held) {
        state.chunks.push(chunk);
        return;
      }
      let start = 0;
      for (const cut of headEnds(state.tail, chunk)) {
        feed(chunk.subarray(start, cut));
        start = cut;
        if (state.held) {
          if (start < chunk.length) state.chunks.push(chunk.subarray(start));
          return;
        }
      }
      feed(chunk.subarray(start));
      state.tail = Buffer.concat([state.tail, chunk.subarray(Math.max(0, chunk.length - 3))]).subarray(-3);
    });
    socket.on('end', () => {
      if (state.held) state.ended = true;
      else for (const l of state.httpOnEnd) l.call(socket);
    });
  });
}

function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Offsets in `chunk` just after each `\r\n\r\n`, including one that began in `tail`. */
function headEnds(tail: Buffer, chunk: Buffer): number[] {
  const cuts: number[] = [];
  const j = Buffer.concat([tail, chunk.subarray(0, 3)]).indexOf(HEAD_END);
  if (j >= 0 && j < tail.length) cuts.push(j + 4 - tail.length);
  for (let i = chunk.indexOf(HEAD_END); i >= 0; i = chunk.indexOf(HEAD_END, i + 1)) {
    if (i + 4 > (cuts[cuts.length - 1] ?? 0)) cuts.push(i + 4);
  }
  return cuts;
}

export interface TakenSocket {
  socket: Socket;
  /** Bytes the client sent after the request head, in order. */
  head: Buffer;
  /** The client had already half-closed. */
  ended: boolean;
}

/** Detach the request's socket from the HTTP server; null when it is already gone. */
export function takeOverSocket(req: IncomingMessage): TakenSocket | null {
  const socket = req.socket;
  if (!socket || socket.destroyed) return null;
  const state = heldBySocket.get(socket);
  heldBySocket.delete(socket);
  takeoverHooks.get(socket)?.();
  takeoverHooks.delete(socket);
  for (const event of ['data', 'end', 'timeout', 'drain', 'error'] as const) socket.removeAllListeners(event);
  socket.setTimeout(0);
  socket.setNoDelay(true);
  return {
    socket,
    head: state ? Buffer.concat(state.chunks) : Buffer.alloc(0),
    ended: state?.ended ?? false,
  };
}
