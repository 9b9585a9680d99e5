// The ledger facade: the validation pipeline of ledger.md §11 over the SQLite-backed state, the
// reads the daemon serves, and the time-driven work (finality) it ticks.
import { LedgerError, invalid } from './errors.js';
import { short } from './codec/hex.js';
import { formatDuration } from './codec/duration.js';
import { intakeBlock, verifyBlockIntrinsics } from './codec/block.js';
import { powValid } from './crypto/pow.js';
import { verifyHashSignature } from './crypto/ed25519.js';
import type { Vote } from './crypto/vote.js';
import type { Block, IntakePath, Keyset, Lease, LeaseState, LeaseTiming, PendingEntry } from './types.js';
import type {
  AccountSummary,
  BalanceReport,
  ChainBlock,
  ConflictRecord,
  DelegationReport,
  KeyPage,
  LedgerEvent,
  LedgerService,
  LedgerStats,
  Reputation,
  SubmitResult,
  SupplyReport,
} from './service.js';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Database as SqliteDatabase } from './store/db.js';
import { LedgerStore } from './store/ledger-store.js';
import { Statechain } from './statechain/statechain.js';
import { parseStatechainBlock } from './statechain/block.js';
import { CertificateStore } from './certificates/store.js';
import { parseLedgerGenesis, validateLedgerGenesis } from './genesis/genesis.js';
import { LedgerState } from './state/ledger-state.js';
import { ConflictBook, MAX_CONFLICT_BLOCKS } from './state/conflicts.js';
import { Finality } from './state/finality.js';
import { reportLease, reportedState, type AccountState } from './state/records.js';
import { computeSupply } from './state/supply.js';
import { RecentBlocks } from './state/recent.js';
import { computeReputation } from './state/reputation.js';
import { computeSpendable, replayBalances } from './state/spendable.js';
import type { WeightReport } from './state/delegation.js';
import { validatorFor } from './blocks/index.js';
import { checkCredentials, type HashSignatureVerifier } from './blocks/credentials.js';
import type { GovernanceView, LedgerView, ValidationContext } from './blocks/context.js';

export const LIVE_TIMESTAMP_WINDOW_NS = 3_600_000_000_000n;
export const DEFAULT_STABILITY_WINDOW_NS = 3_000_000_000n;
export const DEFAULT_CERTIFICATE_ITERATIONS = 375_000_000n;
export const DEFAULT_PAGE = 1000;
const MAX_PREVERIFIED = 100_000;
const ASSET_NAME_RE = /^[A-Z0-9]{1,8}$/;
const ALLOWED_ASSETS = new Set(['XE', 'XUSD']);
/** Descendant types a swap may unwind (ledger.md §21). */
const UNWINDABLE = new Set(['send', 'receive', 'burn', 'mint']);

export interface LedgerOptions {
  /** From openDatabase(path); other modules keep their own tables in the same file. */
  db: SqliteDatabase;
  /** The two genesis JSON texts (devnet: ledger/genesis/devnet.ts). */
  genesis: { ledger: string; statechain: string };
  /** Node setting; effective = max(setting, sys.tokenomics.min_pow_difficulty as of the block). */
  powDifficulty: bigint;
  /** Unix ns clock, injectable so tests can replay fixed timestamps. */
  now?: () => bigint;
  /** Node identity key: casts votes as a representative (devnet: dev1). */
  identitySeed?: Uint8Array;
  /** ledger.md §15.2 (default 3 s; devnet 0). */
  stabilityWindowNs?: bigint;
  /** Expected certificate iterations (devnet 1,000,000; default 375,000,000). */
  certificateIterations?: bigint;
  /** The node's logger (pino); the ledger logs only failures of background work. */
  logger?: Logger;
}

export function openLedger(opts: LedgerOptions): Ledger {
  return new Ledger(opts);
}

export class GenesisMismatchError extends Error {
  constructor() {
    super('genesis mismatch: this data dir belongs to a different network');
    this.name = 'GenesisMismatchError';
  }
}

function wallClockNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** The first `limit` of `sorted` (keys past the cursor, ascending) with their values; `nextAfter` when more follow. */
function pageOf<T>(sorted: readonly string[], limit: number, get: (k: string) => T): KeyPage<T> {
  const page = sorted.slice(0, limit);
  const entries = page.map((k): [string, T] => [k, get(k)]);
  return sorted.length > limit && page.length > 0 ? { entries, nextAfter: page[page.length - 1]! } : { entries };
}

function sortedPage<T>(keys: Iterable<string>, after: string | undefined, limit: number, get: (k: string) => T): KeyPage<T> {
  return pageOf([...keys].filter((k) => after === undefined || k > after).sort(), limit, get);
}

export class Ledger implements LedgerService {
  readonly networkId: string;
  readonly genesisHash: string;
  readonly statechainGenesisHash: string;
  readonly leaseTiming: LeaseTiming;
  /** The concrete state chain (governance reads: `asOf`, `representativesPolicy`). */
  readonly statechainImpl: Statechain;
  readonly certificates: CertificateStore;
  readonly powDifficulty: bigint;

  private readonly store: LedgerStore;
  private readonly state: LedgerState;
  private conflictBook: ConflictBook;
  private finality: Finality;
  private readonly identitySeed: Uint8Array | undefined;
  private readonly stabilityWindowNs: bigint;
  /** Events held back while a group commit is open; null outside one. */
  private batchEvents: LedgerEvent[] | null = null;
  private readonly now: () => bigint;
  private readonly listeners = new Set<(e: LedgerEvent) => void>();
  private readonly view: LedgerView;
  /** Signatures checked elsewhere: (public key, signature) pairs by block hash, each usable once. */
  private readonly preverified = new Map<string, { publicKey: string; signature: string }[]>();
  private preverifiedCount = 0;
  /** Block hash → a PoW value computed elsewhere, with the nonce it was computed for. */
  private readonly precomputedPow = new Map<string, { nonce: bigint; value: bigint }>();
  private readonly recent = new RecentBlocks();
  private blockTotal: number;
  private readonly genesisBalance: bigint;
  private readonly unsubscribeStatechain: () => void;
  private readonly logger: Logger | undefined;

  constructor(opts: LedgerOptions) {
    this.now = opts.now ?? wallClockNs;
    this.logger = opts.logger;
    this.powDifficulty = opts.powDifficulty;
    this.store = new LedgerStore(opts.db);
    const genesis = parseLedgerGenesis(opts.genesis.ledger);
    this.leaseTiming = validateLedgerGenesis(genesis);
    // Refuse a data dir of another network before anything (the state chain included) touches it.
    const storedGenesis = this.store.meta('genesis_hash');
    const storedStatechain = this.store.meta('statechain_genesis_hash');
    if (
      (storedGenesis !== undefined && storedGenesis !== genesis.hash) ||
      (storedStatechain !== undefined && storedStatechain !== parseStatechainBlock(opts.genesis.statechain).hash)
    ) {
      throw new GenesisMismatchError();
    }
    this.statechainImpl = new Statechain(opts.db, opts.genesis.statechain, { now: this.now });
    this.networkId = this.statechainImpl.networkId;
    this.genesisHash = genesis.hash;
    this.genesisBalance = genesis.balance;
    this.statechainGenesisHash = this.statechainImpl.genesisHash;

    this.state = new LedgerState(this.store);
    if (storedGenesis === undefined) {
      if (this.state.accounts.size !== 0) throw new GenesisMismatchError();
      this.store.transaction(() => {
        this.state.applyGenesis(genesis);
        this.store.setMeta('genesis_hash', genesis.hash);
        this.store.setMeta('statechain_genesis_hash', this.statechainGenesisHash);
      });
    }
    this.blockTotal = this.countBlocks();
    this.seedRecent();

    this.certificates = new CertificateStore(this.store, {
      networkId: this.networkId,
      iterations: opts.certificateIterations ?? DEFAULT_CERTIFICATE_ITERATIONS,
      hasAccount: (a) => this.state.accounts.has(a),
    });
    this.state.onPin = (h) => this.certificates.pin(h);
    this.identitySeed = opts.identitySeed;
    this.stabilityWindowNs = opts.stabilityWindowNs ?? DEFAULT_STABILITY_WINDOW_NS;
    this.conflictBook = new ConflictBook(this.store);
    this.finality = this.newFinality();
    if (this.weightReport().total === 0n) throw new Error('ledger: total delegated weight is zero; refusing to start');

    this.view = {
      account: (a) => this.state.account(a),
      pending: (h) => this.state.pending.get(h),
      lease: (h) => this.state.leases.get(h),
      hasBlock: (h) => this.store.hasBlock(h),
      certificate: (h) => this.certificates.get(h),
      supersededBy: (c, at) => this.certificates.supersededBy(c, at),
      isSendContested: (hash, account) => this.isSendContested(hash, account),
    };
    this.unsubscribeStatechain = this.statechainImpl.onApplied((block) =>
      this.emit({ kind: 'statechain.applied', block }),
    );
    // As every finality pass: its writes share one commit.
    this.batch(() => this.advanceFinality());
  }

  get statechain(): Statechain {
    return this.statechainImpl;
  }

  private newFinality(): Finality {
    return new Finality({
      store: this.store,
      state: this.state,
      conflicts: this.conflictBook,
      weights: () => this.weightReport(),
      now: this.now,
      identitySeed: this.identitySeed,
      stabilityWindowNs: this.stabilityWindowNs,
      onVote: (vote) => this.emit({ kind: 'vote.cast', vote }),
      promote: (winner) => this.promote(winner),
    });
  }

  /**
   * Group commit: everything `fn` does to the ledger shares one SQLite transaction, so a batch of
   * blocks costs one WAL commit, not one each. Events are delivered after the commit, and callers
   * report results only when this returns, so "applied" still means durable. Nested calls join the
   * open batch. If the transaction rolls back after writes, memory is rebuilt from the tables.
   */
  batch<T>(fn: () => T): T {
    if (this.batchEvents) return fn();
    const events: LedgerEvent[] = [];
    this.batchEvents = events;
    const changesBefore = this.store.totalChanges();
    const finalityBefore = { advances: this.finality.advances, lastFinalityNs: this.finality.lastFinalityNs };
    let result: T;
    try {
      result = storageGuard(() => this.store.transaction(fn));
    } catch (e) {
      if (this.store.totalChanges() !== changesBefore) this.reloadFromStore(finalityBefore);
      throw e;
    } finally {
      this.batchEvents = null;
    }
    for (const e of events) this.emit(e);
    return result;
  }

  /** After a rolled-back group commit: every in-memory structure again as the tables hold it. */
  private reloadFromStore(finalityCounters: { advances: bigint; lastFinalityNs: bigint }): void {
    const { advances, lastFinalityNs } = finalityCounters;
    this.state.load();
    this.certificates.reload();
    this.conflictBook = new ConflictBook(this.store);
    this.finality = this.newFinality();
    this.finality.advances = advances;
    this.finality.lastFinalityNs = lastFinalityNs;
    this.blockTotal = this.countBlocks();
    this.seedRecent();
  }

  /** Chain blocks over all accounts (each account's height). */
  private countBlocks(): number {
    let n = 0;
    for (const a of this.state.accounts.values()) n += a.height;
    return n;
  }

  // ------------------------------------------------------------------------------------------
  // Intake

  /**
   * Mark signatures as already verified (e.g. by a worker pool); the pipeline then skips the
   * ed25519 check of exactly these (public key, hash, signature) triples, once. Matched on the
   * checked values themselves, so no later change of a block object can reuse an entry. (Kept by
   * hash, whose string a block carries along: no long key is built and hashed per signature.)
   */
  preverify(entries: { publicKey: string; hash: string; signature: string }[]): void {
    // Entries of blocks rejected before their signature check are never consumed: bound the set.
    if (this.preverifiedCount + entries.length > MAX_PREVERIFIED) {
      this.preverified.clear();
      this.preverifiedCount = 0;
    }
    for (const { publicKey, hash, signature } of entries) {
      const pairs = this.preverified.get(hash);
      if (pairs) pairs.push({ publicKey, signature });
      else this.preverified.set(hash, [{ publicKey, signature }]);
      this.preverifiedCount++;
    }
  }

  private readonly verifyHashSignature: HashSignatureVerifier = (pub, hash, sig) => {
    const pairs = this.preverified.get(hash);
    const i = pairs ? pairs.findIndex((p) => p.publicKey === pub && p.signature === sig) : -1;
    if (i < 0) return verifyHashSignature(pub, hash, sig);
    if (pairs!.length === 1) this.preverified.delete(hash);
    else pairs!.splice(i, 1);
    this.preverifiedCount--;
    return true;
  };

  precomputePow(entries: { hash: string; nonce: bigint; value: bigint }[]): void {
    // Entries of blocks rejected before their PoW step are never consumed: bound the map.
    if (this.precomputedPow.size + entries.length > MAX_PREVERIFIED) this.precomputedPow.clear();
    for (const { hash, nonce, value } of entries) this.precomputedPow.set(hash, { nonce, value });
  }

  /** Step 5 for a block whose hash is verified: its PoW value (precomputed, or computed now) meets `difficulty`. */
  private powMeets(b: Block, difficulty: bigint): boolean {
    const known = this.precomputedPow.get(b.hash);
    if (known !== undefined) this.precomputedPow.delete(b.hash);
    return known?.nonce === b.pow_nonce ? known.value >= difficulty : powValid(b.pow_nonce, b.hash, difficulty);
  }

  /** ledger.md §11. Throws LedgerError on rejection. */
  submit(input: Block, path: IntakePath = 'live'): SubmitResult {
    return this.batch(() => this.submitOne(input, path));
  }

  /** Many submissions in one group commit: per block its result or its rejection, in order. */
  submitMany(blocks: Block[], path: IntakePath = 'live'): (SubmitResult | LedgerError)[] {
    return this.batch(() =>
      blocks.map((b) => {
        try {
          return this.submitOne(b, path);
        } catch (e) {
          if (e instanceof LedgerError) return e;
          throw e;
        }
      }),
    );
  }

  private submitOne(input: Block, path: IntakePath): SubmitResult {
    // 1–3: type, applicable fields, hex shape, attestation count and duplicates.
    const b = intakeBlock(input);
    if (b.type === 'genesis') {
      throw invalid('genesis block rejected: ledger is not empty');
    }
    // 4: verify (hash, key declaration, opening signature).
    verifyBlockIntrinsics(b, this.networkId, this.verifyHashSignature);
    // 5: proof of work at the effective difficulty.
    const gov = this.statechainImpl.asOf(b.timestamp < 0n ? 0n : b.timestamp);
    if (!this.powMeets(b, this.effectiveDifficulty(gov))) {
      throw new LedgerError('pow', 'invalid proof of work');
    }
    // 6: timestamp window (live only).
    const now = this.now();
    if (path === 'live') {
      if (b.timestamp < 0n) throw invalid('block timestamp must not be negative');
      const delta = b.timestamp - now;
      if ((delta < 0n ? -delta : delta) > LIVE_TIMESTAMP_WINDOW_NS) {
        throw invalid(`block timestamp out of range: delta=${formatDuration(delta)}`);
      }
    }
    // 7: every submission runs to completion synchronously, so the per-account and per-lease locks
    // are implicit in the single-threaded event loop.
    // 8: duplicate. The verified hash commits to the block's position (account, previous), so a
    // block extending its account's frontier, or opening an account not yet known, cannot be on the
    // chain: only other blocks need the store read.
    const acct = this.state.account(b.account);
    const extendsChain = acct ? b.previous === acct.frontier : b.previous === '0';
    const held = (extendsChain ? undefined : this.store.block(b.hash)?.block) ?? this.conflictBook.stagedBlock(b.hash);
    if (held) return { status: 'duplicate', block: held };
    // 9: credentials.
    checkCredentials(b, acct, this.verifyHashSignature);
    // 10: conflict detection.
    if (acct && b.previous !== acct.frontier) {
      const sibling = this.siblingOf(acct, b.previous);
      if (sibling) return this.stage(b, sibling, acct, gov, path, now);
    }
    if (this.conflictBook.hasOpen(b.account)) {
      throw new LedgerError('conflict', 'account has unresolved conflict — block rejected pending resolution');
    }
    // 11: asset.
    checkAsset(b);
    // 12: per-type validation and commit.
    const effects = validatorFor(b.type)(this.context(gov, path, now, null), b);
    storageGuard(() => this.state.commit(b, effects));
    this.blockTotal += 1;
    this.recent.add(b);
    this.emit({ kind: 'block.applied', block: b });
    // 13: voting starts for the block.
    this.finality.noteCandidate(b.account, b.previous);
    if (this.finality.identityAddress) this.advanceFinality([b.account]);
    return { status: 'applied', block: b };
  }

  private effectiveDifficulty(gov: GovernanceView): bigint {
    return gov.minPowDifficulty > this.powDifficulty ? gov.minPowDifficulty : this.powDifficulty;
  }

  private context(
    gov: GovernanceView,
    path: IntakePath,
    now: bigint,
    staged: ValidationContext['staged'],
  ): ValidationContext {
    return { view: this.view, path, now, gov, timing: this.leaseTiming, staged };
  }

  /** The chain block whose `previous` equals `previous` (ledger.md §14), with its height. */
  private siblingOf(acct: AccountState, previous: string): { block: Block; height: number } | null {
    let height: number;
    if (previous === '0') {
      height = 1;
    } else {
      const parent = this.store.block(previous);
      if (!parent || parent.block.account !== acct.address || parent.height >= acct.height) return null;
      height = parent.height + 1;
    }
    const block = this.store.blockAt(acct.address, height);
    return block ? { block, height } : null;
  }

  private stage(
    b: Block,
    sibling: { block: Block; height: number },
    acct: AccountState,
    gov: GovernanceView,
    path: IntakePath,
    now: bigint,
  ): SubmitResult {
    if (sibling.height <= acct.finalHeight) {
      throw invalid(`block conflicts with finalized block ${short(sibling.block.hash)} — rejected`);
    }
    checkAsset(b);
    const balances = replayBalances(this.store.chain(acct.address, 0, sibling.height - 1), (h) =>
      this.state.leases.get(h),
    );
    validatorFor(b.type)(this.context(gov, path, now, { balances }), b);
    const existing = this.conflictBook.at(b.account, b.previous);
    const hashes = existing ? existing.block_hashes : [sibling.block.hash];
    if (hashes.length >= MAX_CONFLICT_BLOCKS) {
      throw invalid(`conflict at ${short(b.previous)} already has ${MAX_CONFLICT_BLOCKS} blocks`);
    }
    let record: ConflictRecord;
    if (existing) {
      record = { ...existing, block_hashes: [...hashes, b.hash] };
    } else {
      const report = this.weightReport();
      record = {
        account_address: b.account,
        previous_hash: b.previous,
        block_hashes: [sibling.block.hash, b.hash],
        detected_at: now,
        weight_snapshot: Object.fromEntries(report.weights),
        total_weight: report.total,
      };
    }
    storageGuard(() => this.store.transaction(() => this.conflictBook.stage(b, record, now)));
    this.emit({ kind: 'block.staged', block: b });
    this.finality.noteCandidate(b.account, b.previous);
    if (this.finality.identityAddress) this.advanceFinality([b.account]);
    return { status: 'staged', block: b };
  }

  private isSendContested(sendHash: string, account: string): boolean {
    if (!this.conflictBook.hasOpen(account)) return false;
    const send = this.store.block(sendHash);
    return !!send && this.conflictBook.at(account, send.block.previous) !== undefined;
  }

  /**
   * Conflict promotion (ledger.md §21): unwind the loser and its descendants (cascading into the
   * receives of unwound sends), then re-apply the winner through full validation — one atomic
   * store commit. Throws LedgerError when the swap is refused; nothing changes then.
   */
  private promote(winner: Block): void {
    const acct = this.state.account(winner.account);
    const loser = acct ? this.siblingOf(acct, winner.previous) : null;
    const undo = loser ? this.unwindPlan(winner.account, loser.height) : [];
    const gov = this.statechainImpl.asOf(winner.timestamp < 0n ? 0n : winner.timestamp);
    if (!powValid(winner.pow_nonce, winner.hash, this.effectiveDifficulty(gov))) {
      throw invalid(`confirm conflict: winner block ${short(winner.hash)} failed PoW validation`);
    }
    try {
      this.store.transaction(() => {
        for (const b of undo) this.state.unwind(b);
        checkCredentials(winner, this.state.account(winner.account), this.verifyHashSignature);
        const effects = validatorFor(winner.type)(this.context(gov, 'sync', this.now(), null), winner);
        this.state.commit(winner, effects);
      });
    } catch (e) {
      this.state.load();
      throw e;
    }
    this.blockTotal += 1 - undo.length;
    if (undo.length > 0) this.seedRecent();
    else this.recent.add(winner);
    this.emit({ kind: 'block.applied', block: winner });
  }

  /** Blocks to undo, in order, to take `account` back below `fromHeight` (§21); throws on refusal. */
  private unwindPlan(account: string, fromHeight: number): Block[] {
    const plan: Block[] = [];
    const scheduled = new Map<string, number>();
    const visit = (address: string, from: number, loserChain: boolean): void => {
      const acct = this.state.account(address)!;
      const start = Math.min(from, scheduled.get(address) ?? Infinity);
      const end = scheduled.get(address) ?? acct.height + 1;
      if (from >= end) return;
      scheduled.set(address, start);
      const rows = this.store.chain(address, from - 1, end - from).reverse();
      for (const { block, height } of rows) {
        if (height <= acct.finalHeight) throw invalid(`swap: refusing to replace finalized block ${short(block.hash)}`);
        const isLoser = loserChain && height === fromHeight;
        if (block.type === 'multisig_update' || (!isLoser && !UNWINDABLE.has(block.type))) {
          throw invalid(`swap: cannot unwind descendant "${block.type}" ${short(block.hash)}`);
        }
        if (block.type === 'send' && !this.state.pending.has(block.hash)) {
          const receive = this.store
            .chain(block.destination, 0, Number.MAX_SAFE_INTEGER)
            .find((r) => r.block.type === 'receive' && r.block.source === block.hash);
          if (receive) visit(block.destination, receive.height, false);
        }
        plan.push(block);
      }
    };
    visit(account, fromHeight, true);
    return plan;
  }

  /** An incoming representative vote (ledger.md §15.1); may answer with this node's final vote. */
  submitVote(vote: Vote): Vote | null {
    return this.batch(() => this.finality.submitVote(vote));
  }

  /** Time-driven work, called every ~250 ms: finality after the stability window, re-tallies. */
  tick(): void {
    this.batch(() => this.advanceFinality());
  }

  /** Finality work never fails a submission that already committed; tick() retries it. */
  private advanceFinality(hint?: string[]): void {
    try {
      this.finality.process(hint);
    } catch (err) {
      this.logger?.error({ err }, 'ledger: finality processing failed');
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reads

  private isFinal(account: string, height: number): boolean {
    return this.finality.isFinalized(account, height);
  }

  getBlock(hash: string): ChainBlock | null {
    const row = this.store.block(hash);
    if (row) return { block: row.block, finalized: this.isFinal(row.block.account, row.height) };
    const staged = this.conflictBook.stagedBlock(hash);
    return staged ? { block: staged, finalized: false } : null;
  }

  blockFinalized(hash: string): boolean | null {
    const at = this.store.position(hash);
    if (at) return this.isFinal(at.account, at.height);
    return this.conflictBook.stagedBlock(hash) ? false : null;
  }

  accountChain(address: string, offset = 0, limit = DEFAULT_PAGE): { total: number; blocks: ChainBlock[] } {
    const acct = this.state.account(address);
    if (!acct) return { total: 0, blocks: [] };
    const rows = this.store.chain(address, offset, limit);
    return {
      total: acct.height,
      blocks: rows.map((r) => ({ block: r.block, finalized: r.height <= acct.finalHeight })),
    };
  }

  balances(address: string): BalanceReport {
    const acct = this.state.account(address);
    if (!acct) return { address, balances: {}, spendable: {}, final_height: 0 };
    // With the whole chain finalized (a representative's own node, the usual case) the spendable
    // balance is the running balance; only an unfinalized tail needs the chain replayed.
    const spendable =
      acct.finalHeight === acct.height
        ? acct.balances
        : computeSpendable(this.store.chain(address, 0, acct.height), acct.finalHeight, (h) => this.state.leases.get(h));
    return {
      address,
      balances: nonZero(acct.balances),
      spendable: nonZero(spendable),
      final_height: acct.finalHeight,
    };
  }

  runningBalance(address: string, asset: string): bigint {
    return this.state.account(address)?.balances.get(asset) ?? 0n;
  }

  frontier(address: string): string | null {
    return this.state.account(address)?.frontier ?? null;
  }

  accounts(offset = 0, limit = DEFAULT_PAGE): AccountSummary[] {
    return this.state.addresses
      .keys()
      .slice(offset, offset + limit)
      .map((k) => {
        const a = this.state.account(k)!;
        return {
          address: a.address,
          balances: nonZero(a.balances),
          block_count: a.height,
          frontier: a.frontier,
          last_block_timestamp: a.lastTimestamp,
        };
      });
  }

  frontiers(after: string | undefined, limit: number): KeyPage<string> {
    // One key beyond the page tells whether another page follows.
    return pageOf(this.state.addresses.keysAfter(after, limit + 1), limit, (k) => this.state.account(k)!.frontier);
  }

  *sortedFrontiers(): Generator<[address: string, frontier: string, blockCount: number]> {
    for (const address of this.state.addresses.keys()) {
      const a = this.state.account(address)!;
      yield [address, a.frontier, a.height];
    }
  }

  /** Sorted by timestamp, then send hash (api.md §6.3). */
  pending(): PendingEntry[] {
    return sortPending([...this.state.pending.values()]);
  }

  pendingFor(address: string): PendingEntry[] {
    return sortPending(this.state.pendingFor(address));
  }

  keyset(address: string): Keyset | null {
    const ks = this.state.account(address)?.keyset;
    return ks ? { keys: [...ks.keys], threshold: ks.threshold } : null;
  }

  publicKeyOf(address: string): string | null {
    const pk = this.state.account(address)?.pubKey;
    return pk ? pk : null;
  }

  reputation(address: string): Reputation | null {
    const leases = this.state.leasesOf(address);
    return leases.length === 0 ? null : computeReputation(address, leases);
  }

  reputations(after: string | undefined, limit: number): KeyPage<Reputation> {
    return sortedPage(this.state.leaseParticipants(), after, limit, (k) => computeReputation(k, this.state.leasesOf(k)));
  }

  /** Sorted by account, then previous hash (api.md §6.4). */
  conflicts(): ConflictRecord[] {
    return sortConflicts(this.conflictBook.all());
  }

  conflictsFor(account: string): ConflictRecord[] {
    return sortConflicts(this.conflictBook.forAccount(account));
  }

  private weightReport(): WeightReport {
    const policy = this.statechainImpl.representativesPolicy();
    return this.state.delegation.report({ allowlist: policy.mode === 'allowlist' ? policy.addresses : null });
  }

  delegation(): DelegationReport {
    const r = this.weightReport();
    return {
      weights: Object.fromEntries(r.weights),
      total_weight: r.total,
      ineligible_weights: Object.fromEntries(r.ineligible),
      ineligible_weight: r.ineligibleTotal,
      eligibility_restricted: r.restricted,
      eligibility_failed_open: r.failedOpen,
    };
  }

  supply(): SupplyReport {
    return computeSupply({
      genesisSupply: this.genesisBalance,
      accounts: this.state.accounts.values(),
      pending: this.state.pending.values(),
      leases: this.state.leases.values(),
      minted: this.state.counters.minted,
      burned: this.state.counters.burned,
      blocks: this.blockTotal,
    });
  }

  lease(hash: string, now: bigint = this.now()): Lease | null {
    const l = this.state.leases.get(hash);
    return l ? reportLease(l, now, this.leaseTiming) : null;
  }

  /** Sorted by lease hash (api.md §7.1). */
  leases(filter: { state?: LeaseState; offset?: number; limit?: number; now?: bigint }): Lease[] {
    const now = filter.now ?? this.now();
    const offset = filter.offset ?? 0;
    const limit = filter.limit ?? DEFAULT_PAGE;
    return [...this.state.leases.values()]
      .filter((l) => filter.state === undefined || reportedState(l, now, this.leaseTiming) === filter.state)
      .sort((x, y) => (x.lease_hash < y.lease_hash ? -1 : x.lease_hash > y.lease_hash ? 1 : 0))
      .slice(offset, offset + limit)
      .map((l) => reportLease(l, now, this.leaseTiming));
  }

  /** From the cache of the newest 1000 blocks (the SPEC's `GET /blocks/recent`). */
  newestBlocks(limit: number): Block[] {
    return this.recent.newest(limit);
  }

  private seedRecent(): void {
    this.recent.seed(this.state.accounts.values(), (address, height) => this.store.blockAt(address, height));
  }

  stats(): LedgerStats {
    const r = this.weightReport();
    return {
      accounts: this.state.accounts.size,
      block_count: this.blockTotal,
      delegation_underflows: this.state.counters.delegation_underflows,
      total_delegated_weight: r.total,
      representatives: r.weights.size,
      finality_advances: this.finality.advances,
      last_finality_ns: this.finality.lastFinalityNs,
      unfinalized_positions: this.finality.unfinalizedPositions,
      conflicts_open: this.conflictBook.size,
    };
  }

  subscribe(listener: (event: LedgerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: LedgerEvent): void {
    if (this.batchEvents) {
      this.batchEvents.push(e);
      return;
    }
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // A listener's failure must never undo or block a committed block.
      }
    }
  }

  close(): void {
    this.unsubscribeStatechain();
    this.listeners.clear();
  }
}

/** Transient SQLite failures reach clients as retryable `storage conflict: …` (ledger.md §20). */
function storageGuard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Database.SqliteError) throw new LedgerError('storage', `storage conflict: ${e.code}`);
    throw e;
  }
}

function checkAsset(b: Block): void {
  if (b.asset === '') throw invalid('block must have an asset');
  if (!ALLOWED_ASSETS.has(b.asset)) {
    throw invalid(ASSET_NAME_RE.test(b.asset) ? `unsupported asset: "${b.asset}"` : 'unsupported asset');
  }
}

function sortPending(entries: PendingEntry[]): PendingEntry[] {
  return entries
    .map((p) => ({ ...p }))
    .sort((x, y) =>
      x.timestamp !== y.timestamp ? (x.timestamp < y.timestamp ? -1 : 1) : x.send_hash < y.send_hash ? -1 : x.send_hash > y.send_hash ? 1 : 0,
    );
}

function sortConflicts(records: ConflictRecord[]): ConflictRecord[] {
  const key = (c: ConflictRecord) => `${c.account_address}:${c.previous_hash}`;
  return [...records].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
}

function nonZero(m: Map<string, bigint>): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [k, v] of [...m].sort(([a], [b]) => (a < b ? -1 : 1))) if (v !== 0n) out[k] = v;
  return out;
}
