// Open conflicts and their staged sibling bodies (ledger.md §14), persisted with the store.
import type { Block } from '../types.js';
import type { ConflictRecord } from '../service.js';
import type { LedgerStore } from '../store/ledger-store.js';

export const MAX_CONFLICT_BLOCKS = 10;

export function positionKey(account: string, previous: string): string {
  return `${account}:${previous}`;
}

export class ConflictBook {
  private readonly records = new Map<string, ConflictRecord>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly staged = new Map<string, { block: Block; stagedAt: bigint }>();

  constructor(private readonly store: LedgerStore) {
    for (const c of store.loadConflicts()) this.index(c);
    for (const s of store.loadStaged()) this.staged.set(s.block.hash, s);
  }

  private index(c: ConflictRecord): void {
    const key = positionKey(c.account_address, c.previous_hash);
    this.records.set(key, c);
    let set = this.byAccount.get(c.account_address);
    if (!set) this.byAccount.set(c.account_address, (set = new Set()));
    set.add(key);
  }

  get size(): number {
    return this.records.size;
  }

  all(): ConflictRecord[] {
    return [...this.records.values()];
  }

  forAccount(account: string): ConflictRecord[] {
    const keys = this.byAccount.get(account);
    return keys ? [...keys].map((k) => this.records.get(k)!) : [];
  }

  hasOpen(account: string): boolean {
    return (this.byAccount.get(account)?.size ?? 0) > 0;
  }

  at(account: string, previous: string): ConflictRecord | undefined {
    // Asked for every position finality weighs: most accounts have no conflict, and no key is built.
    return this.byAccount.has(account) ? this.records.get(positionKey(account, previous)) : undefined;
  }

  stagedBlock(hash: string): Block | undefined {
    return this.staged.get(hash)?.block;
  }

  stagedAt(account: string, previous: string): Block[] {
    if (this.staged.size === 0) return [];
    return [...this.staged.values()]
      .filter((s) => s.block.account === account && s.block.previous === previous)
      .map((s) => s.block);
  }

  /** Record (or extend) the conflict and stage the block; call inside a transaction. */
  stage(block: Block, record: ConflictRecord, now: bigint): void {
    this.store.putConflict(record);
    this.store.putStaged(block, now);
    this.index(record);
    this.staged.set(block.hash, { block, stagedAt: now });
  }

  /** Whether `resolve` at a position of `account` can delete rows (an open conflict, or any staged body). */
  resolvesRows(account: string): boolean {
    return this.byAccount.has(account) || this.staged.size > 0;
  }

  /** Drop the conflict and every staged body at the position; call inside a transaction. */
  resolve(account: string, previous: string): void {
    if (!this.resolvesRows(account)) return;
    const key = positionKey(account, previous);
    if (this.records.delete(key)) this.store.deleteConflict(account, previous);
    const set = this.byAccount.get(account);
    set?.delete(key);
    if (set && set.size === 0) this.byAccount.delete(account);
    for (const b of this.stagedAt(account, previous)) {
      this.staged.delete(b.hash);
      this.store.deleteStaged(b.hash);
    }
  }
}
