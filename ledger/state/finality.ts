// Votes, commit locks and finalization (ledger.md §15). A node whose identity address carries
// eligible weight votes on every position (account, previous): a converge vote for the lowest-hash
// held candidate once its dependencies are final, then — with ≥ 67 % converge weight and the
// stability window passed — a write-once commit lock and a final vote. A candidate with ≥ 67 % final
// weight is the winner; the account's final height rises to it (a watermark).
import { LedgerError, invalid } from '../errors.js';
import { accountAddress } from '../crypto/address.js';
import { signVoteOnDemand, verifyVote, voteSigner, type Vote, type VoteSigner } from '../crypto/vote.js';
import type { Block } from '../types.js';
import type { LedgerStore } from '../store/ledger-store.js';
import type { LedgerState } from './ledger-state.js';
import type { ConflictBook } from './conflicts.js';
import { positionKey } from './conflicts.js';
import type { WeightReport } from './delegation.js';

export const VOTE_WINDOW_NS = 300_000_000_000n;
/** A winner whose promotion failed is not tried again for this long (§15.3). */
export const PROMOTION_RETRY_NS = 30_000_000_000n;
const SOURCE_DEPENDENT = new Set(['receive', 'lease_accept', 'lease_settle', 'lease_cancel', 'lease_force_settle', 'lease_renew']);

export interface FinalityOptions {
  store: LedgerStore;
  state: LedgerState;
  conflicts: ConflictBook;
  weights: () => WeightReport;
  now: () => bigint;
  identitySeed?: Uint8Array;
  stabilityWindowNs: bigint;
  /**
   * Swap a staged winner onto the chain in place of its chain sibling (§21); throws LedgerError
   * when the swap is refused.
   */
  promote: (winner: Block) => void;
  /** Each vote this node signs (for gossip). */
  onVote?: (vote: Vote) => void;
}

interface Identity extends VoteSigner {
  address: string;
}

export class Finality {
  private readonly identity: Identity | null;
  /** account → previous → representative public key → latest vote. */
  private readonly votes = new Map<string, Map<string, Map<string, Vote>>>();
  /** Position key → this node's commit lock: the stored ones and those still in `unwrittenLocks`. */
  private readonly locks = new Map<string, string>();
  /**
   * Locks taken during the running pass, stored when it ends. A position the same pass finalizes,
   * as every position on a node whose own weight decides, then costs no lock row written and
   * deleted again. Events (the final vote among them) leave only after the commit, which stores
   * every lock still needed.
   */
  private readonly unwrittenLocks = new Map<string, { account: string; previous: string; hash: string }>();
  private readonly lastCandidateAt = new Map<string, bigint>();
  private readonly unfinalized = new Set<string>();
  private readonly repAddress = new Map<string, string>();
  private readonly failedPromotion = new Map<string, bigint>();
  advances = 0n;
  lastFinalityNs = 0n;

  constructor(private readonly o: FinalityOptions) {
    if (o.identitySeed) {
      const signer = voteSigner(o.identitySeed);
      this.identity = { ...signer, address: accountAddress(signer.pubKey) };
    } else {
      this.identity = null;
    }
    for (const l of o.store.loadLocks()) this.locks.set(positionKey(l.account, l.previous), l.hash);
    for (const a of o.state.accounts.values()) if (a.height > a.finalHeight) this.unfinalized.add(a.address);
  }

  get identityAddress(): string | null {
    return this.identity?.address ?? null;
  }

  /** Chain blocks not yet final, over all accounts. */
  get unfinalizedPositions(): number {
    let n = 0;
    for (const addr of this.unfinalized) {
      const a = this.o.state.account(addr);
      if (a) n += a.height - a.finalHeight;
    }
    return n;
  }

  /** A held candidate appeared at (account, previous): applied or staged. */
  noteCandidate(account: string, previous: string): void {
    // Only this node's own lock waits for the stability window, so a node without identity keeps no times.
    if (this.identity) this.lastCandidateAt.set(positionKey(account, previous), this.o.now());
    this.unfinalized.add(account);
  }

  isFinalized(account: string, height: number): boolean {
    const a = this.o.state.account(account);
    return !!a && height <= a.finalHeight;
  }

  /**
   * Advance finality as far as votes allow. `hint` limits the first pass to those accounts; any
   * advance triggers a full pass, since dependent positions (receives of a send) may now move.
   */
  process(hint?: string[]): void {
    const report = this.o.weights();
    // Without an identity only positions that received votes can move.
    const everything = () => (this.identity ? [...this.unfinalized] : [...this.votes.keys()]);
    let queue = hint ?? everything();
    try {
      for (;;) {
        let advanced = false;
        for (const addr of queue) {
          while (this.tryAdvance(addr, report)) advanced = true;
        }
        if (!advanced) return;
        queue = everything();
      }
    } finally {
      for (const { account, previous, hash } of this.unwrittenLocks.values()) this.o.store.putLock(account, previous, hash);
      this.unwrittenLocks.clear();
    }
  }

  /** An incoming representative vote (§15.1). Returns a fresh final vote when the position is resolved. */
  submitVote(vote: Vote): Vote | null {
    if (!verifyVote(vote)) throw invalid('vote: signature verification failed');
    const now = this.o.now();
    const skew = vote.timestamp - now;
    if (vote.timestamp < 0n || (skew < 0n ? -skew : skew) > VOTE_WINDOW_NS) throw invalid('vote: timestamp out of range');
    const conflict = this.o.conflicts.at(vote.conflict_account, vote.conflict_previous);
    const rep = this.addressOf(vote.rep_pub_key);
    const weight = conflict ? (conflict.weight_snapshot[rep] ?? 0n) : (this.o.weights().weights.get(rep) ?? 0n);
    if (weight <= 0n) throw invalid('vote: representative has no weight');

    const resolved = this.resolvedAt(vote.conflict_account, vote.conflict_previous);
    if (resolved) return this.identity ? this.sign(resolved, true) : null;

    const byRep = this.votesAt(vote.conflict_account, vote.conflict_previous);
    if (byRep.get(vote.rep_pub_key)?.final) return null; // final votes are irrevocable
    byRep.set(vote.rep_pub_key, vote);
    this.unfinalized.add(vote.conflict_account);
    this.process([vote.conflict_account]);
    return null;
  }

  private votesAt(account: string, previous: string): Map<string, Vote> {
    let byPrev = this.votes.get(account);
    if (!byPrev) this.votes.set(account, (byPrev = new Map()));
    let byRep = byPrev.get(previous);
    if (!byRep) byPrev.set(previous, (byRep = new Map()));
    return byRep;
  }

  private addressOf(pubKey: string): string {
    let a = this.repAddress.get(pubKey);
    if (!a) this.repAddress.set(pubKey, (a = accountAddress(pubKey)));
    return a;
  }

  /** 1-based height of the chain block at a position of `account`, or -1 when not on the chain. */
  private heightAt(account: string, previous: string): number {
    if (previous === '0') return 1;
    const parent = this.o.store.block(previous);
    return parent && parent.block.account === account ? parent.height + 1 : -1;
  }

  /** The finalized block at a position, if the position is below the account's watermark. */
  private resolvedAt(account: string, previous: string): Block | null {
    const a = this.o.state.account(account);
    if (!a) return null;
    const height = this.heightAt(account, previous);
    if (height < 1 || height > a.finalHeight) return null;
    return this.o.store.blockAt(account, height) ?? null;
  }

  private dependenciesFinal(b: Block): boolean {
    if (!SOURCE_DEPENDENT.has(b.type)) return true;
    const src = this.o.store.block(b.source);
    return !!src && this.isFinalized(src.block.account, src.height);
  }

  private sign(b: Block, final: boolean): Vote {
    const vote = signVoteOnDemand(this.identity!, {
      rep_pub_key: this.identity!.pubKey,
      block_hash: b.hash,
      conflict_account: b.account,
      conflict_previous: b.previous,
      timestamp: this.o.now(),
      final,
    });
    this.o.onVote?.(vote);
    return vote;
  }

  private candidatesAt(chainBlock: Block): Block[] {
    const staged = this.o.conflicts.stagedAt(chainBlock.account, chainBlock.previous);
    if (staged.length === 0) return [chainBlock];
    return [chainBlock, ...staged].sort((x, y) => (x.hash < y.hash ? -1 : x.hash > y.hash ? 1 : 0));
  }

  private weighing(account: string, previous: string, report: WeightReport) {
    const conflict = this.o.conflicts.at(account, previous);
    const total = conflict && conflict.total_weight !== 0n ? conflict.total_weight : report.total;
    const weightOf = (rep: string) =>
      conflict ? (conflict.weight_snapshot[rep] ?? 0n) : (report.weights.get(rep) ?? 0n);
    return { total, weightOf };
  }

  /** This node's own converge / lock / final vote on the next unfinalized position (§15.2). */
  private voteOwn(chainBlock: Block, report: WeightReport): void {
    if (!this.identity) return;
    const { account, previous } = chainBlock;
    const { total, weightOf } = this.weighing(account, previous, report);
    if (weightOf(this.identity.address) <= 0n) return;
    const byRep = this.votesAt(account, previous);
    const mine = byRep.get(this.identity.pubKey);
    if (mine?.final) return;
    const candidates = this.candidatesAt(chainBlock);
    const key = positionKey(account, previous);
    const lock = this.locks.get(key);
    if (lock) {
      const locked = candidates.find((c) => c.hash === lock);
      if (locked) byRep.set(this.identity.pubKey, this.sign(locked, true));
      return;
    }
    const pref = candidates[0]!;
    if (!this.dependenciesFinal(pref)) return;
    if (mine?.block_hash !== pref.hash) byRep.set(this.identity.pubKey, this.sign(pref, false));
    let converge = 0n;
    for (const v of byRep.values()) if (v.block_hash === pref.hash) converge += weightOf(this.addressOf(v.rep_pub_key));
    const since = this.o.now() - (this.lastCandidateAt.get(key) ?? 0n);
    if (converge * 100n >= total * 67n && since >= this.o.stabilityWindowNs) {
      this.locks.set(key, pref.hash);
      this.unwrittenLocks.set(key, { account, previous, hash: pref.hash });
      byRep.set(this.identity.pubKey, this.sign(pref, true));
    }
  }

  /** One step: vote on the next position, then tally every voted position; true when final height rose. */
  private tryAdvance(account: string, report: WeightReport): boolean {
    const a = this.o.state.account(account);
    if (!a || a.height <= a.finalHeight) {
      this.unfinalized.delete(account);
      return false;
    }
    if (this.identity) {
      const next = this.o.store.blockAt(account, a.finalHeight + 1);
      if (next) this.voteOwn(next, report);
    }

    let best = 0;
    for (const [previous, byRep] of this.votes.get(account) ?? []) {
      const height = this.heightAt(account, previous);
      if (height <= a.finalHeight || height > a.height) continue;
      const chainBlock = this.o.store.blockAt(account, height);
      if (!chainBlock) continue;
      const { total, weightOf } = this.weighing(account, previous, report);
      if (total === 0n) continue;
      for (const c of this.candidatesAt(chainBlock)) {
        let finalWeight = 0n;
        for (const v of byRep.values()) {
          if (v.final && v.block_hash === c.hash) finalWeight += weightOf(this.addressOf(v.rep_pub_key));
        }
        if (finalWeight * 100n < total * 67n) continue;
        if (c.hash !== chainBlock.hash && !this.tryPromote(c)) break;
        if (height > best) best = height;
        break;
      }
    }
    if (best === 0) return false;
    this.finalizeUpTo(account, best);
    return true;
  }

  private tryPromote(winner: Block): boolean {
    const failed = this.failedPromotion.get(winner.hash);
    if (failed !== undefined && this.o.now() - failed < PROMOTION_RETRY_NS) return false;
    try {
      this.o.promote(winner);
      this.failedPromotion.delete(winner.hash);
      return true;
    } catch (e) {
      if (!(e instanceof LedgerError)) throw e;
      this.failedPromotion.set(winner.hash, this.o.now());
      return false;
    }
  }

  /** Raise the watermark; every position at or below it is resolved (conflicts, staged bodies, votes, locks). */
  private finalizeUpTo(account: string, height: number): void {
    const resolved = [...(this.votes.get(account)?.keys() ?? [])];
    for (const c of this.o.conflicts.forAccount(account)) resolved.push(c.previous_hash);
    const positions = [...new Set(resolved)].filter((p) => {
      const h = this.heightAt(account, p);
      return h >= 1 && h <= height;
    });
    const keys = positions.map((previous) => positionKey(account, previous));
    const resolve = () => {
      this.o.state.setFinalHeight(account, height);
      positions.forEach((previous, i) => {
        this.o.conflicts.resolve(account, previous);
        // `locks` mirrors the stored locks (and the unwritten ones): a position without one has no row.
        if (this.locks.has(keys[i]!) && !this.unwrittenLocks.has(keys[i]!)) this.o.store.deleteLock(account, previous);
      });
    };
    // Conflict and staged rows are deleted at once: a savepoint keeps them with the watermark. The
    // other writes (account row, locks) are the store's end-of-transaction writes and need none.
    if (this.o.conflicts.resolvesRows(account)) this.o.store.transaction(resolve);
    else resolve();
    const byPrev = this.votes.get(account);
    positions.forEach((previous, i) => {
      byPrev?.delete(previous);
      this.locks.delete(keys[i]!);
      this.unwrittenLocks.delete(keys[i]!);
      this.lastCandidateAt.delete(keys[i]!);
    });
    if (byPrev && byPrev.size === 0) this.votes.delete(account);
    this.advances += 1n;
    this.lastFinalityNs = this.o.now();
  }
}
