// Block intake of the HTTP API. Submissions that arrive while earlier ones are being checked form
// the next batch: its signatures are verified, and its proofs of work computed, on the VerifyPool's
// worker threads, then the batch is applied in arrival order as one group commit
// (ledger.submitMany). Each submission settles only after its batch has committed, so a 201 still
// means "durable", while N blocks cost one commit and no signature check or PoW hash on the event
// loop. A signature the workers could not confirm is simply checked again inline by the ledger,
// which gives the exact rejection message; the ledger compares each PoW value with the difficulty.
import { LedgerError } from '../../ledger/errors.js';
import type { LedgerService, SubmitResult } from '../../ledger/service.js';
import type { Block } from '../../ledger/types.js';
import type { IntakeChecker, PowItem, SignatureItem } from './verify-pool.js';

/**
 * Blocks per batch (one signature check, one group commit). Small, so the event loop applies the
 * first checked batch while the workers check the next ones, instead of idling while one large
 * batch is checked (measured: ~30 % more blocks/s under sustained pipelined load than 256).
 */
const MAX_BATCH = 32;
/**
 * With nothing in flight, a batch leaves as soon as this many submissions wait: the first answers
 * of a burst then come back after 8 signature checks rather than 32 (with the next rule, measured
 * ~8 % more blocks/s under pipelined load).
 */
const FIRST_BATCH = 8;
/** Batches being checked at once (queued on the workers). */
const MAX_IN_FLIGHT = 8;
/**
 * Checked batches waiting together are applied as one group commit of up to this many blocks: a
 * commit's WAL pages are shared by its blocks (measured in the ledger alone: 64 blocks per commit
 * cost ~10 % less per block than 32).
 */
const MAX_COMMIT = 256;
/** Submissions waiting beyond this are refused as retryable: the queue never grows without bound. */
export const MAX_QUEUED = 8192;

/** The intake is full; the client should retry shortly. */
export class IntakeBusyError extends Error {
  constructor() {
    super('block intake busy');
    this.name = 'IntakeBusyError';
  }
}

interface Submission {
  block: Block;
  resolve: (r: SubmitResult) => void;
  reject: (e: unknown) => void;
}

interface Batch {
  submissions: Submission[];
  checked: boolean;
}

export interface BlockSubmitter {
  submit(block: Block): Promise<SubmitResult>;
}

export class BlockIntake implements BlockSubmitter {
  private queue: Submission[] = [];
  private readonly inFlight: Batch[] = [];
  private scheduled = false;
  private applyScheduled = false;
  /** account → key declared by a queued opening block, for checking the blocks queued behind it. */
  private readonly queuedOpenings = new Map<string, string>();

  constructor(
    private readonly ledger: LedgerService,
    /** null: no worker threads; the ledger checks signatures and PoW inline. */
    private readonly checker: IntakeChecker | null,
  ) {}

  submit(block: Block): Promise<SubmitResult> {
    if (this.queue.length >= MAX_QUEUED) return Promise.reject(new IntakeBusyError());
    return new Promise((resolve, reject) => {
      this.queue.push({ block, resolve, reject });
      if (block.previous === '0' && block.pub_key !== '') this.queuedOpenings.set(block.account, block.pub_key);
      // A full batch (or a first one) goes to the workers at once, while the event loop still reads
      // the rest of a burst; the remainder waits for the read to finish.
      if (this.queue.length >= (this.inFlight.length === 0 ? FIRST_BATCH : MAX_BATCH)) {
        this.dispatch();
      } else if (!this.scheduled) {
        this.scheduled = true;
        // Let every request already received join this batch first.
        setImmediate(() => {
          this.scheduled = false;
          this.dispatch();
        });
      }
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0 && this.inFlight.length < MAX_IN_FLIGHT) {
      const batch: Batch = { submissions: this.queue.splice(0, MAX_BATCH), checked: false };
      this.inFlight.push(batch);
      void this.check(batch).then(() => {
        batch.checked = true;
        this.scheduleApply();
      });
    }
  }

  private async check(batch: Batch): Promise<void> {
    if (!this.checker) return;
    const signatures = batch.submissions.flatMap((s) => this.signatureItems(s.block));
    const pow = batch.submissions.map(({ block }): PowItem => [block.pow_nonce, block.hash]);
    let verdicts;
    try {
      verdicts = await this.checker.check({ signatures, pow });
    } catch {
      return; // the ledger checks inline
    }
    this.ledger.preverify(
      signatures.filter((_, i) => verdicts.signatures[i]).map(([publicKey, hash, signature]) => ({ publicKey, hash, signature })),
    );
    this.ledger.precomputePow(
      pow.flatMap(([nonce, hash], i) => {
        const value = verdicts.pow[i];
        return value === null || value === undefined ? [] : [{ hash, nonce, value }];
      }),
    );
  }

  /** The signatures the pipeline will check for `b`, where the signing key is already knowable. */
  private signatureItems(b: Block): SignatureItem[] {
    if (b.signatures !== null) return b.signatures.map((s): SignatureItem => [s.public_key, b.hash, s.signature]);
    const key = b.previous === '0' ? b.pub_key : (this.ledger.publicKeyOf(b.account) ?? this.queuedOpenings.get(b.account));
    return key ? [[key, b.hash, b.signature]] : [];
  }

  /**
   * Apply after the rest of this event-loop turn: checks that complete meanwhile join the same
   * commit, and requests read meanwhile are on their way to the workers first.
   */
  private scheduleApply(): void {
    if (this.applyScheduled) return;
    this.applyScheduled = true;
    setImmediate(() => {
      this.applyScheduled = false;
      this.applyReady();
    });
  }

  /** Apply checked batches in arrival order, those waiting together as one group commit. */
  private applyReady(): void {
    while (this.inFlight[0]?.checked) {
      const submissions: Submission[] = [];
      while (this.inFlight[0]?.checked && submissions.length + this.inFlight[0].submissions.length <= MAX_COMMIT) {
        submissions.push(...this.inFlight.shift()!.submissions);
      }
      this.apply(submissions);
    }
    this.dispatch();
  }

  private apply(submissions: Submission[]): void {
    for (const { block } of submissions) {
      if (block.previous === '0' && this.queuedOpenings.get(block.account) === block.pub_key) {
        this.queuedOpenings.delete(block.account);
      }
    }
    let results: (SubmitResult | LedgerError)[];
    try {
      results = this.ledger.submitMany(submissions.map((s) => s.block), 'live');
    } catch (err) {
      // The group commit itself failed: nothing of the batch was applied.
      for (const s of submissions) s.reject(err);
      return;
    }
    submissions.forEach((s, i) => {
      const r = results[i]!;
      if (r instanceof LedgerError) s.reject(r);
      else s.resolve(r);
    });
  }
}
