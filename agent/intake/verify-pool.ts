// Signature checks on worker threads, so ed25519 verification, the largest single cost of block
// intake, runs beside the event loop rather than on it. Workers start on first use (an idle node
// pays nothing) and are replaced if one dies. Needs the compiled tree (dist/): the worker is .js.
import { Worker } from 'node:worker_threads';
import { isLowerHex } from '../../ledger/codec/hex.js';

/** An ed25519 signature over a block hash: public key, hash and signature, all hex. */
export type SignatureItem = [publicKey: string, hash: string, signature: string];

export interface SignatureChecker {
  /** One verdict per item, in order. Rejects only when the checker itself fails. */
  check(items: SignatureItem[]): Promise<boolean[]>;
  close(): Promise<void>;
}

/** Packed item: 32-byte public key, 32-byte hash, 64-byte signature (one transfer, no cloning). */
export const ITEM_BYTES = 128;

export interface VerifyRequest {
  id: number;
  packed: ArrayBuffer;
}

export interface VerifyResponse {
  id: number;
  /** 1 = verified, per packed item. */
  ok: Uint8Array;
}

interface Pending {
  resolve: (ok: Uint8Array) => void;
  reject: (err: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

const WORKER_URL = new URL('./verify-worker.js', import.meta.url);

export class VerifyPool implements SignatureChecker {
  private readonly workers: PoolWorker[] = [];
  private turn = 0;
  private nextId = 0;
  private closed = false;

  constructor(private readonly size: number) {
    if (!(size >= 1)) throw new RangeError('verify pool needs at least one worker');
  }

  async check(items: SignatureItem[]): Promise<boolean[]> {
    if (this.closed) throw new Error('verify pool closed');
    // Malformed items are never sent: they fail here, as they would fail the check itself.
    const wellFormed = items.map(([pub, hash, sig]) => isLowerHex(pub, 64) && isLowerHex(hash, 64) && isLowerHex(sig, 128));
    const sent = items.filter((_, i) => wellFormed[i]);
    if (sent.length === 0) return items.map(() => false);
    const packed = Buffer.allocUnsafeSlow(sent.length * ITEM_BYTES);
    sent.forEach(([pub, hash, sig], i) => {
      const o = i * ITEM_BYTES;
      packed.write(pub, o, 'hex');
      packed.write(hash, o + 32, 'hex');
      packed.write(sig, o + 64, 'hex');
    });
    const w = this.pick();
    const id = this.nextId++;
    const ok = await new Promise<Uint8Array>((resolve, reject) => {
      w.pending.set(id, { resolve, reject });
      w.worker.postMessage({ id, packed: packed.buffer } satisfies VerifyRequest, [packed.buffer]);
    });
    let next = 0;
    return wellFormed.map((formed) => formed && ok[next++] === 1);
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    for (const w of workers) failAll(w, new Error('verify pool closed'));
  }

  private pick(): PoolWorker {
    if (this.workers.length < this.size) return this.spawn();
    this.turn = (this.turn + 1) % this.workers.length;
    return this.workers[this.turn]!;
  }

  private spawn(): PoolWorker {
    const w: PoolWorker = { worker: new Worker(WORKER_URL), pending: new Map() };
    w.worker.unref();
    w.worker.on('message', ({ id, ok }: VerifyResponse) => {
      const p = w.pending.get(id);
      w.pending.delete(id);
      p?.resolve(ok);
    });
    const retire = (err: Error) => {
      const i = this.workers.indexOf(w);
      if (i >= 0) this.workers.splice(i, 1);
      failAll(w, err);
    };
    w.worker.on('error', retire);
    w.worker.on('exit', (code) => retire(new Error(`verify worker exited with code ${code}`)));
    this.workers.push(w);
    return w;
  }
}

function failAll(w: PoolWorker, err: Error): void {
  for (const p of w.pending.values()) p.reject(err);
  w.pending.clear();
}
