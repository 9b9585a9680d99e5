// A raw byte pipe between two duplex streams, shared by the HTTP tunnel and the gateway's
// direct-tcpip channels: EOF travels on as a half-close, both ends close once both directions have
// ended (or either fails), and a pipe with no byte in either direction for `idleMs` is closed.
//
// Between two plain TCP sockets (the tunnel's case) each direction reads into one reusable buffer
// (net's `onread`), in reads of up to SOCKET_READ_BYTES, and writes it straight on. Node's default
// read path allocates a 64 KiB buffer per read and copies every short read once more into a buffer
// of its exact size; that allocation, copy and page faulting per read was half of the relay's CPU
// per byte (bench:tunnel, client → VM: 1.0–1.2 CPU s/GiB before, about 0.5 after).

import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Per direction of a socket-to-socket pipe (measured: as fast as 1 MiB, a quarter of the memory). */
const SOCKET_READ_BYTES = 256 * 1024;

export interface PipeOptions {
  idleMs: number;
  /** Bytes `a` already sent before the pipe started (e.g. read by the HTTP parser); written to `b` first. */
  headOfA?: Buffer;
  /** `a` already reached EOF before the pipe started. */
  aEnded?: boolean;
  /** Called once, when both ends are closed. */
  onClose?: () => void;
}

export function pipeBoth(a: Duplex, b: Duplex, opts: PipeOptions): void {
  // The reusable buffer is only safe towards a plain socket: a write to it hands the bytes to the
  // kernel at once or keeps pointing into the buffer until its callback; other streams (an SSH
  // channel, a libp2p stream) may keep the chunk itself.
  const socketToSocket = isPlainSocket(a) && isPlainSocket(b);
  const readerA = socketToSocket && !opts.aEnded ? bufferedReader(a as Socket) : null;
  const readerB = socketToSocket ? bufferedReader(b as Socket) : null;
  if (readerA) a = readerA.socket;
  if (readerB) b = readerB.socket;

  let ended = 0;
  let closed = false;
  // A flag per chunk, checked a few times per idle period: cheaper than re-arming a timer per chunk.
  let active = false;
  let quietSince = Date.now();
  const idle = setInterval(() => {
    if (active) {
      active = false;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= opts.idleMs) shutdown();
  }, Math.max(10, Math.min(opts.idleMs / 8, 60_000)));
  idle.unref();

  const shutdown = () => {
    if (closed) return;
    closed = true;
    clearInterval(idle);
    a.destroy();
    b.destroy();
    opts.onClose?.();
  };

  /** Both directions are done: let pending writes drain, then close. */
  const oneDirectionEnded = () => {
    if (++ended < 2) return;
    let finished = 0;
    for (const s of [a, b]) {
      if (s.writableFinished) finished++;
      else s.once('finish', () => ++finished === 2 && shutdown());
    }
    if (finished === 2) shutdown();
  };

  for (const s of [a, b]) {
    s.on('error', shutdown);
    s.on('close', shutdown);
  }

  /** src → dst with backpressure; src's EOF becomes dst's half-close. */
  const pump = (src: Duplex, dst: Duplex, reader: BufferedReader | null) => {
    if (reader) {
      if (reader.early) dst.write(reader.early);
      let waiting = false;
      const flushed = () => {
        if (waiting && dst.writableLength === 0) {
          waiting = false;
          src.resume();
        }
      };
      reader.receive = (chunk) => {
        active = true;
        dst.write(chunk, flushed);
        if (dst.writableLength === 0) return true;
        // Not all taken by the kernel: the pending write still points into the read buffer, so
        // no read may refill it before the write is done.
        waiting = true;
        return false;
      };
    } else {
      src.on('data', (chunk: Buffer) => {
        active = true;
        if (!dst.write(chunk)) {
          src.pause();
          dst.once('drain', () => src.resume());
        }
      });
    }
    src.on('end', () => {
      dst.end();
      oneDirectionEnded();
    });
    src.resume(); // also a stream its opener left explicitly paused
  };

  if (opts.headOfA && opts.headOfA.length > 0) b.write(opts.headOfA);
  if (opts.aEnded) {
    b.end();
    oneDirectionEnded();
  } else {
    pump(a, b, readerA);
  }
  pump(b, a, readerB);
}

function isPlainSocket(s: Duplex): boolean {
  return Object.getPrototypeOf(s) === Socket.prototype;
}

interface BufferedReader {
  /** Replaces the original socket, which must not be used for I/O any more. */
  socket: Socket;
  /** Bytes the original socket had read but nobody consumed yet. */
  early: Buffer | null;
  /** Gets each read (valid only during the call); false stops reading until `socket.resume()`. */
  receive: (chunk: Buffer) => boolean;
}

interface SocketInternals {
  _handle: { useUserBuffer?: unknown } | null;
  _readableState: { ended: boolean };
}

/**
 * Moves a connected socket's handle (the file descriptor) to a new Socket that reads into one
 * reusable buffer; net offers `onread` only at construction. The two stay linked: destroying either
 * closes both, so owners holding the original (the HTTP server, a lease's tunnel slot) still close
 * the connection. Null when the socket cannot move cleanly (EOF seen, a write pending, no stream handle).
 */
function bufferedReader(original: Socket): BufferedReader | null {
  const internals = original as unknown as SocketInternals;
  const handle = internals._handle;
  if (!handle || typeof handle.useUserBuffer !== 'function') return null;
  if (original.connecting || original.destroyed || internals._readableState.ended || original.writableLength > 0) return null;
  const reader: BufferedReader = { socket: original, early: null, receive: () => false };
  const buffer = Buffer.allocUnsafe(SOCKET_READ_BYTES);
  internals._handle = null;
  const options = {
    handle,
    allowHalfOpen: true,
    pauseOnCreate: true,
    onread: { buffer, callback: (n: number, buf: Uint8Array) => reader.receive((buf as Buffer).subarray(0, n)) },
  };
  const moved = new Socket(options as ConstructorParameters<typeof Socket>[0]);
  if ((moved as unknown as SocketInternals)._handle !== handle) {
    // This Node did not adopt the handle: leave the connection where it was.
    internals._handle = handle;
    return null;
  }
  reader.socket = moved;
  reader.early = original.readableLength > 0 ? (original.read() as Buffer) : null;
  reader.socket.once('close', () => original.destroy());
  original.once('close', () => reader.socket.destroy());
  return reader;
}
