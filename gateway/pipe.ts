// A raw byte pipe between two duplex streams, shared by the HTTP tunnel and the gateway's
// direct-tcpip channels: EOF travels on as a half-close, both ends close once both directions have
// ended (or either fails), and a pipe with no byte in either direction for `idleMs` is closed.

import type { Duplex } from 'node:stream';

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
  const pump = (src: Duplex, dst: Duplex) => {
    src.on('data', (chunk: Buffer) => {
      active = true;
      if (!dst.write(chunk)) {
        src.pause();
        dst.once('drain', () => src.resume());
      }
    });
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
    pump(a, b);
  }
  pump(b, a);
}
