// The intake's checks on worker threads, so ed25519 verification, the largest single cost of block
// intake, and the proof-of-work hash run beside the event loop rather than on it. Workers start on
// first use (an idle node pays nothing) and are replaced if one dies. Needs the compiled tree
// (dist/): the worker is .js.
import { Worker } from 'node:worker_threads';
import { U64_MAX } from '../../ledger/codec/bytes.js';

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

/**
 * Hex characters of one signature item as sent: public key (64), hash (64), signature (128). Items
 * travel as one string per batch, unchecked: the worker checks and decodes the hex, so the event
 * loop does neither.
 */
export const ITEM_HEX = 256;
/** Hex characters of a PoW item's hash as sent. */
export const POW_HASH_HEX = 64;

export interface VerifyRequest {
  id: number;
  /** Signature items, ITEM_HEX characters each. */
  signatures: string;
  /** Per PoW item: its nonce, with its hash (POW_HASH_HEX characters each) in `powHashes`. */
  nonces: BigUint64Array;
  powHashes: string;
}

export interface VerifyResponse {
  id: number;
  /** 1 = verified, per signature item (0 also for an item that is not lowercase hex). */
  ok: Uint8Array;
  /** Per PoW item, its value; counts only where `powOk` is 1 (its hash was lowercase hex). */
  powValues: BigUint64Array;
  powOk: Uint8Array;
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
    // An item of the wrong length is never sent (it fails here, as it would fail the check itself);
    // the worker refuses the rest of what is malformed.
    const signatureSent = signatures.map(([pub, hash, sig]) => pub.length === 64 && hash.length === 64 && sig.length === 128);
    let packed = '';
    signatures.forEach(([pub, hash, sig], i) => {
      if (signatureSent[i]) packed += pub + hash + sig;
    });
    const powSent = pow.map(([nonce, hash]) => nonce >= 0n && nonce <= U64_MAX && hash.length === POW_HASH_HEX);
    const nonces = new BigUint64Array(count(powSent));
    let powHashes = '';
    let n = 0;
    pow.forEach(([nonce, hash], i) => {
      if (!powSent[i]) return;
      nonces[n++] = nonce;
      powHashes += hash;
    });

    const { ok, powValues, powOk } =
      packed.length + nonces.length === 0
        ? { ok: new Uint8Array(0), powValues: new BigUint64Array(0), powOk: new Uint8Array(0) }
        : await this.post({ id: this.nextId++, signatures: packed, nonces, powHashes });
    let nextSignature = 0;
    let nextPow = 0;
    return {
      signatures: signatureSent.map((sent) => sent && ok[nextSignature++] === 1),
      pow: powSent.map((sent) => {
        if (!sent) return null;
        const i = nextPow++;
        return powOk[i] === 1 ? powValues[i]! : null;
      }),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    for (const w of workers) failAll(w, new Error('verify pool closed'));
  }

  private post(request: VerifyRequest): Promise<VerifyResponse> {
    const w = this.pick();
    return new Promise<VerifyResponse>((resolve, reject) => {
      w.pending.set(request.id, { resolve, reject });
      w.worker.postMessage(request, [request.nonces.buffer as ArrayBuffer]);
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
