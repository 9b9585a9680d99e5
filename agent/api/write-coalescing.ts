// One write per connection per event-loop turn, instead of one per response.
//
// Node's HTTP server answers pipelined requests one at a time: response N+1 is handed to the socket
// only after N's write has completed, so a client with 16 requests in flight costs 16 write system
// calls even when all 16 answers are ready in the same turn (block intake answers a whole group
// commit at once). Measured on the intake benchmark, those writes were the largest single cost on
// the event loop after the ledger itself (~13 % of it).
//
// `coalesceWrites(socket)` lets writes that the kernel would take at once (nothing queued in
// libuv) complete immediately, and sends everything written in this turn as one writev at
// setImmediate. Writes that find data still queued (a slow reader) go the normal way, so Node's
// backpressure is unchanged. Ending or destroying the socket, and a tunnel taking it over, send the
// held bytes first.
//
// This relies on net.Socket internals (`_writeGeneric`, `_final`, `_destroy`, `_handle`); when they
// are not as expected the socket is left alone.
import type { Socket } from 'node:net';

interface SocketInternals {
  _handle: { writeQueueSize: number } | null;
  _writeGeneric(writev: boolean, data: unknown, encoding: string, cb: (err?: Error | null) => void): void;
  _final(cb: (err?: Error | null) => void): void;
  _destroy(err: Error | null, cb: (err: Error | null) => void): void;
}

interface Chunk {
  chunk: unknown;
  encoding: string;
}

const OVERRIDDEN = ['_writeGeneric', '_final', '_destroy'] as const;

function hasExpectedInternals(s: Partial<SocketInternals>): s is SocketInternals {
  return OVERRIDDEN.every((m) => typeof s[m] === 'function') && typeof s._handle?.writeQueueSize === 'number';
}

/** Coalesce `socket`'s writes per event-loop turn; returns a function that flushes and undoes it (or null). */
export function coalesceWrites(socket: Socket): (() => void) | null {
  const s = socket as unknown as SocketInternals;
  if (!hasExpectedInternals(s)) return null;
  const { _writeGeneric: writeGeneric, _final: final, _destroy: destroy } = s;
  let held: Chunk[] | null = null;

  const flush = (): void => {
    const chunks = held;
    held = null;
    if (!chunks || !s._handle) return;
    writeGeneric.call(s, true, chunks, '', (err) => {
      if (err) socket.destroy(err);
    });
  };

  s._writeGeneric = function (writev, data, encoding, cb) {
    if (socket.connecting || !s._handle || s._handle.writeQueueSize !== 0) {
      flush();
      return writeGeneric.call(this, writev, data, encoding, cb);
    }
    if (!held) {
      held = [];
      setImmediate(flush);
    }
    if (writev) for (const c of data as Chunk[]) held.push(c);
    else held.push({ chunk: data, encoding });
    cb();
  };
  s._final = function (cb) {
    flush();
    final.call(this, cb);
  };
  s._destroy = function (err, cb) {
    flush();
    destroy.call(this, err, cb);
  };

  return () => {
    flush();
    // The instance properties shadowed the prototype's methods: removing them restores those.
    for (const m of OVERRIDDEN) delete (s as Partial<SocketInternals>)[m];
  };
}
