// The intake's checks on worker threads, so ed25519 verification, the largest single cost of block
// intake, and the proof-of-work hash run beside the event loop rather than on it. Workers start on
// first use (an idle node pays nothing) and are replaced if one dies. Needs the compiled tree
// (dist/): the worker is .js.
import { Worker } from 'node:worker_threads';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { POW_PREIMAGE_BYTES, U64_MAX, writePowPreimage } from '../../ledger/crypto/pow.js';

/** An ed25519 signature over a block hash: public key, hash and signature, all hex. */
export type SignatureItem = [publicKey: string, hash: string, signature: string];

/** A block's proof of work (ledger.md §10): its nonce and its hash (hex). */
export type PowItem = [nonce: bigint, hash: string];

export interface BatchChecks {
  signatures: SignatureItem[];
  pow: PowItem[];
}

export interface BatchVerdicts {
  /** Per signature item: verified. */
  signatures: boolean[];
  /** Per PoW item: its value, or null for a malformed item (a hash that is not 64 hex, a nonce outside u64). */
  pow: (bigint | null)[];
}

export interface IntakeChecker {
  /** The verdicts, per item, in order. Rejects only when the checker itself fails. */
  check(batch: BatchChecks): Promise<BatchVerdicts>;
  close(): Promise<void>;
}

/** Packed signature item: 32-byte public key, 32-byte hash, 64-byte signature (one transfer, no cloning). */
export const ITEM_BYTES = 128;

export interface VerifyRequest {
  id: number;
  /** Signature items, ITEM_BYTES each. */
  packed: ArrayBuffer;
  /** PoW preimages, POW_PREIMAGE_BYTES each. */
  pow: ArrayBuffer;
}

export interface VerifyResponse {
  id: number;
  /** 1 = verified, per packed signature item. */
  ok: Uint8Array;
  /** Per preimage, its value. */
  powValues: BigUint64Array;
}

interface Pending {
  resolve: (r: VerifyResponse) => void;
  reject: (err: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

const WORKER_URL = new URL('./verify-worker.js', import.meta.url);

export class VerifyPool implements IntakeChecker {
  private readonly workers: PoolWorker[] = [];
  private turn = 0;
  private nextId = 0;
  private closed = false;

  constructor(private readonly size: number) {
    if (!(size >= 1)) throw new RangeError('verify pool needs at least one worker');
  }

  async check({ signatures, pow }: BatchChecks): Promise<BatchVerdicts> {
    if (this.closed) throw new Error('verify pool closed');
    // Malformed items are never sent: a signature fails here, as it would fail the check itself.
    const signatureSent = signatures.map(([pub, hash, sig]) => isLowerHex(pub, 64) && isLowerHex(hash, 64) && isLowerHex(sig, 128));
    const powSent = pow.map(([nonce, hash]) => nonce >= 0n && nonce <= U64_MAX && isLowerHex(hash, 64));
    const packed = Buffer.allocUnsafeSlow(count(signatureSent) * ITEM_BYTES);
    let o = 0;
    signatures.forEach(([pub, hash, sig], i) => {
      if (!signatureSent[i]) return;
      packed.write(pub, o, 'hex');
      packed.write(hash, o + 32, 'hex');
      packed.write(sig, o + 64, 'hex');
      o += ITEM_BYTES;
    });
    const preimages = Buffer.allocUnsafeSlow(count(powSent) * POW_PREIMAGE_BYTES);
    o = 0;
    pow.forEach(([nonce, hash], i) => {
      if (!powSent[i]) return;
      writePowPreimage(preimages, o, nonce, hash);
      o += POW_PREIMAGE_BYTES;
    });

    const { ok, powValues } =
      packed.length + preimages.length === 0
        ? { ok: new Uint8Array(0), powValues: new BigUint64Array(0) }
        : await this.post(packed, preimages);
    let nextSignature = 0;
    let nextPow = 0;
    return {
      signatures: signatureSent.map((sent) => sent && ok[nextSignature++] === 1),
      pow: powSent.map((sent) => (sent ? powValues[nextPow++]! : null)),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    for (const w of workers) failAll(w, new Error('verify pool closed'));
  }

  private post(packed: Buffer, preimages: Buffer): Promise<VerifyResponse> {
    const w = this.pick();
    const id = this.nextId++;
    return new Promise<VerifyResponse>((resolve, reject) => {
      w.pending.set(id, { resolve, reject });
      const request: VerifyRequest = { id, packed: packed.buffer as ArrayBuffer, pow: preimages.buffer as ArrayBuffer };
      w.worker.postMessage(request, [request.packed, request.pow]);
    });
  }

  private pick(): PoolWorker {
    if (this.workers.length < this.size) return this.spawn();
    this.turn = (this.turn + 1) % this.workers.length;
    return this.workers[this.turn]!;
  }

  private spawn(): PoolWorker {
    const w: PoolWorker = { worker: new Worker(WORKER_URL), pending: new Map() };
    w.worker.unref();
    w.worker.on('message', (response: VerifyResponse) => {
      const p = w.pending.get(response.id);
      w.pending.delete(response.id);
      p?.resolve(response);
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

function count(flags: boolean[]): number {
  let n = 0;
  for (const f of flags) if (f) n++;
  return n;
}

function failAll(w: PoolWorker, err: Error): void {
  for (const p of w.pending.values()) p.reject(err);
  w.pending.clear();
}
