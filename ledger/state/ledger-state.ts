// The ledger's in-memory state (accounts, pending entries, leases, delegation weights, counters),
// rebuilt from the store at start, and the commit of one block: every write of the block and its
// effects in one SQLite transaction, installed in memory only once the transaction committed.
import { invalid } from '../errors.js';
import type { Block, PendingEntry } from '../types.js';
import type { Effects } from '../blocks/context.js';
import type { LedgerStore } from '../store/ledger-store.js';
import { cloneAccount, cloneLease, leaseEscrow, type AccountState, type StoredLease } from './records.js';
import { replayBalances } from './spendable.js';
import { Delegation } from './delegation.js';
import { SortedKeys } from './sorted-keys.js';

/** Counters that history alone determines (not derivable from current state). */
export interface LedgerCounters {
  minted: bigint;
  burned: bigint;
  delegation_underflows: bigint;
}

export class LedgerState {
  private readonly byAddress = new Map<string, AccountState>();
  readonly accounts: ReadonlyMap<string, AccountState> = this.byAddress;
  /** The keys of `accounts`, for reads in address order (kept by setAccount and removeAccount). */
  readonly addresses = new SortedKeys();
  readonly pending = new Map<string, PendingEntry>();
  private readonly pendingByDestination = new Map<string, Set<string>>();
  readonly leases = new Map<string, StoredLease>();
  private readonly leasesByAccount = new Map<string, Set<string>>();
  readonly delegation = new Delegation();
  readonly counters: LedgerCounters = { minted: 0n, burned: 0n, delegation_underflows: 0n };
  /** Called for each certificate a committed block pins (inside the transaction). */
  onPin: (hash: string) => void = () => {};

  constructor(private readonly store: LedgerStore) {
    this.load();
  }

  /** (Re)build every in-memory structure from the tables. */
  load(): void {
    this.byAddress.clear();
    this.addresses.clear();
    this.pending.clear();
    this.pendingByDestination.clear();
    this.leases.clear();
    this.leasesByAccount.clear();
    this.delegation.clear();
    for (const a of this.store.loadAccounts()) {
      this.setAccount(a);
      this.delegation.add(a.representative, a.balances.get('XE') ?? 0n);
    }
    for (const p of this.store.loadPending()) this.indexPending(p);
    for (const l of this.store.loadLeases()) this.indexLease(l);
    const c = this.store.counters();
    this.counters.minted = c.get('minted') ?? 0n;
    this.counters.burned = c.get('burned') ?? 0n;
    this.counters.delegation_underflows = c.get('delegation_underflows') ?? 0n;
  }

  account(address: string): AccountState | undefined {
    return this.accounts.get(address);
  }

  pendingFor(destination: string): PendingEntry[] {
    return [...(this.pendingByDestination.get(destination) ?? [])].map((h) => this.pending.get(h)!);
  }

  leasesOf(address: string): StoredLease[] {
    return [...(this.leasesByAccount.get(address) ?? [])].map((h) => this.leases.get(h)!);
  }

  /** Accounts with any lease activity. */
  leaseParticipants(): string[] {
    return [...this.leasesByAccount.keys()];
  }

  private indexPending(p: PendingEntry): void {
    this.pending.set(p.send_hash, p);
    let set = this.pendingByDestination.get(p.destination);
    if (!set) this.pendingByDestination.set(p.destination, (set = new Set()));
    set.add(p.send_hash);
  }

  private unindexPending(hash: string): void {
    const p = this.pending.get(hash);
    if (!p) return;
    this.pending.delete(hash);
    const set = this.pendingByDestination.get(p.destination);
    set?.delete(hash);
    if (set && set.size === 0) this.pendingByDestination.delete(p.destination);
  }

  private indexLease(l: StoredLease): void {
    this.leases.set(l.lease_hash, l);
    for (const who of [l.consumer, l.provider]) {
      let set = this.leasesByAccount.get(who);
      if (!set) this.leasesByAccount.set(who, (set = new Set()));
      set.add(l.lease_hash);
    }
  }

  /** The genesis: committed directly with final height 1 (ledger.md §19). */
  applyGenesis(g: Block): void {
    const acct: AccountState = {
      address: g.account,
      frontier: g.hash,
      height: 1,
      lastTimestamp: g.timestamp,
      pubKey: g.pub_key,
      keyset: null,
      representative: g.representative,
      finalHeight: 1,
      balances: new Map([['XE', g.balance]]),
    };
    this.store.transaction(() => {
      this.store.insertBlock(g, 1);
      this.store.putAccount(acct);
    });
    this.setAccount(acct);
    this.delegation.add(acct.representative, g.balance);
  }

  /** Commit a validated block and its effects atomically; returns the block's 1-based height. */
  commit(block: Block, effects: Effects): number {
    const before = this.accounts.get(block.account);
    const acct: AccountState = before
      ? cloneAccount(before)
      : {
          address: block.account,
          frontier: '0',
          height: 0,
          lastTimestamp: 0n,
          pubKey: '',
          keyset: null,
          representative: '',
          finalHeight: 0,
          balances: new Map(),
        };
    acct.height += 1;
    acct.frontier = block.hash;
    acct.lastTimestamp = block.timestamp;
    acct.balances.set(block.asset === '' ? 'XE' : block.asset, block.balance);
    if (effects.stakeReturn) acct.balances.set('XUSD', (acct.balances.get('XUSD') ?? 0n) + effects.stakeReturn);
    if (block.pub_key !== '' && block.signatures === null) acct.pubKey = block.pub_key;
    if (effects.keyset) acct.keyset = { keys: [...effects.keyset.keys], threshold: effects.keyset.threshold };
    if (block.representative !== '') acct.representative = block.representative;

    const lease = effects.lease;
    if (lease) this.checkLeaseRace(lease.record.lease_hash, lease.expect);

    let grown: PendingEntry | undefined;
    if (effects.pendingGrow) {
      const p = this.pending.get(effects.pendingGrow.hash);
      if (!p) throw invalid(`no pending escrow for lease: ${effects.pendingGrow.hash.slice(0, 12)}`);
      grown = { ...p, amount: p.amount + effects.pendingGrow.amount };
    }
    const minted = this.counters.minted + (effects.minted ?? 0n);
    const burned = this.counters.burned + (effects.burned ?? 0n);
    const oldRep = before?.representative ?? '';
    const oldXe = before?.balances.get('XE') ?? 0n;
    const underflow = this.delegation.wouldUnderflow(oldRep, oldXe);
    const underflows = this.counters.delegation_underflows + (underflow ? 1n : 0n);

    // The account and pending rows are the store's end-of-transaction writes; the block row is the
    // one statement written at once. Written last, it needs no savepoint of its own (a statement is
    // atomic), so a block with no further immediate write (every transfer) runs without one.
    const deferredThenBlock = () => {
      this.store.putAccount(acct);
      if (effects.pendingAdd) this.store.putPending(effects.pendingAdd);
      if (effects.pendingRemove) this.store.deletePending(effects.pendingRemove);
      if (grown) this.store.putPending(grown);
      this.store.insertBlock(block, acct.height);
    };
    if (lease || effects.minted || effects.burned || underflow || effects.pinCertificate) {
      this.store.transaction(() => {
        deferredThenBlock();
        if (lease) this.store.putLease(lease.record);
        if (effects.minted) this.store.setCounter('minted', minted);
        if (effects.burned) this.store.setCounter('burned', burned);
        if (underflow) this.store.setCounter('delegation_underflows', underflows);
        if (effects.pinCertificate) this.onPin(effects.pinCertificate);
      });
    } else {
      this.store.withoutSavepoint(deferredThenBlock);
    }

    // Committed: install in memory.
    this.delegation.move(oldRep, oldXe, acct.representative, acct.balances.get('XE') ?? 0n);
    this.counters.delegation_underflows = underflows;
    this.setAccount(acct);
    if (effects.pendingAdd) this.indexPending(effects.pendingAdd);
    if (effects.pendingRemove) this.unindexPending(effects.pendingRemove);
    if (grown) this.pending.set(grown.send_hash, grown);
    if (lease) this.indexLease(lease.record);
    this.counters.minted = minted;
    this.counters.burned = burned;
    return acct.height;
  }

  private checkLeaseRace(hash: string, expect: StoredLease['state'] | null): void {
    const current = this.leases.get(hash);
    if (expect === null) {
      if (current) throw invalid(`lease state conflict: lease ${hash.slice(0, 12)} is ${current.state}, want none`);
      return;
    }
    if (!current) throw invalid(`lease state conflict: lease ${hash.slice(0, 12)} not found`);
    if (current.state !== expect) {
      throw invalid(`lease state conflict: lease ${hash.slice(0, 12)} is ${current.state}, want ${expect}`);
    }
  }

  private putPendingEntry(p: PendingEntry): void {
    this.store.putPending(p);
    this.unindexPending(p.send_hash);
    this.indexPending(p);
  }

  private removePendingEntry(hash: string): void {
    this.store.deletePending(hash);
    this.unindexPending(hash);
  }

  private putLeaseRecord(l: StoredLease): void {
    this.store.putLease(l);
    this.indexLease(l);
  }

  private escrowEntry(l: StoredLease): PendingEntry {
    return {
      send_hash: l.lease_hash,
      source: l.consumer,
      destination: l.provider,
      amount: leaseEscrow(l),
      asset: 'XUSD',
      timestamp: l.created_at,
    };
  }

  /**
   * Undo the frontier block of its account (ledger.md §21 undo table), then rebuild the account
   * from the shortened chain (balances, key, keyset, delegation). Memory changes at once: call
   * inside a transaction and `load()` again if it rolls back.
   */
  unwind(block: Block): void {
    const lease = (hash: string) => {
      const l = this.leases.get(hash);
      if (!l) throw invalid(`lease state conflict: lease ${hash.slice(0, 12)} not found`);
      return cloneLease(l);
    };
    switch (block.type) {
      case 'send':
        this.removePendingEntry(block.hash);
        break;
      case 'receive': {
        const send = this.store.block(block.source)?.block;
        if (!send) throw invalid(`swap: source send ${block.source.slice(0, 12)} not found`);
        this.putPendingEntry({
          send_hash: send.hash,
          source: send.account,
          destination: send.destination,
          amount: send.amount,
          asset: send.asset,
          timestamp: send.timestamp,
        });
        break;
      }
      case 'burn':
        this.counters.burned -= block.amount;
        this.store.setCounter('burned', this.counters.burned);
        break;
      case 'mint':
        this.counters.minted -= block.amount;
        this.store.setCounter('minted', this.counters.minted);
        break;
      case 'lease': {
        this.removePendingEntry(block.hash);
        this.store.deleteLease(block.hash);
        this.leases.delete(block.hash);
        for (const who of [block.account, block.destination]) this.leasesByAccount.get(who)?.delete(block.hash);
        break;
      }
      case 'lease_accept': {
        const l = lease(block.source);
        Object.assign(l, { state: 'created', stake: 0n, start_time: 0n, locked_r: 0n, locked_payout_cap: 0n, locked_twap_milli: 0n });
        this.putLeaseRecord(l);
        break;
      }
      case 'lease_settle':
      case 'lease_force_settle':
      case 'lease_cancel': {
        const l = lease(block.source);
        l.state = block.type === 'lease_cancel' ? 'created' : 'accepted';
        l.ended_at = 0n;
        l.emission = 0n;
        this.putLeaseRecord(l);
        this.putPendingEntry(this.escrowEntry(l));
        break;
      }
      case 'lease_renew': {
        const l = lease(block.source);
        l.renewals = l.renewals.filter((r) => r.renew_hash !== block.hash);
        this.putLeaseRecord(l);
        this.putPendingEntry(this.escrowEntry(l));
        break;
      }
      case 'multisig_open':
        break;
      default:
        throw invalid(`swap: cannot unwind descendant "${block.type}" ${block.hash.slice(0, 12)}...`);
    }
    this.store.deleteBlock(block.hash);
    this.rebuildAccount(block.account);
  }

  private setAccount(acct: AccountState): void {
    if (!this.byAddress.has(acct.address)) this.addresses.add(acct.address);
    this.byAddress.set(acct.address, acct);
  }

  private removeAccount(address: string): void {
    if (this.byAddress.delete(address)) this.addresses.delete(address);
  }

  private rebuildAccount(address: string): void {
    const before = this.accounts.get(address);
    const chain = this.store.chain(address, 0, Number.MAX_SAFE_INTEGER);
    const oldRep = before?.representative ?? '';
    const oldXe = before?.balances.get('XE') ?? 0n;
    if (chain.length === 0) {
      this.store.deleteAccount(address);
      this.removeAccount(address);
      this.delegation.move(oldRep, oldXe, '', 0n);
      return;
    }
    const last = chain[chain.length - 1]!;
    const acct: AccountState = {
      address,
      frontier: last.block.hash,
      height: last.height,
      lastTimestamp: last.block.timestamp,
      pubKey: chain[0]!.block.signatures === null ? chain[0]!.block.pub_key : '',
      keyset: null,
      representative: '',
      finalHeight: Math.min(before?.finalHeight ?? 0, last.height),
      balances: replayBalances(chain, (h) => this.leases.get(h)),
    };
    for (const { block } of chain) {
      if (block.keyset && (block.type === 'multisig_open' || block.type === 'multisig_update')) acct.keyset = block.keyset;
      if (block.representative !== '') acct.representative = block.representative;
    }
    this.store.putAccount(acct);
    this.setAccount(acct);
    this.delegation.move(oldRep, oldXe, acct.representative, acct.balances.get('XE') ?? 0n);
  }

  /** Raise an account's finality watermark (persisted). */
  setFinalHeight(address: string, height: number): void {
    const acct = this.accounts.get(address);
    if (!acct || height <= acct.finalHeight) return;
    acct.finalHeight = height;
    this.store.putAccount(acct);
  }
}
