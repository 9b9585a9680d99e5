// Bounded, node-local chat store (chat-and-directory.md §4.2). Each envelope is filed under `to` and,
// if different, under `from`. Per account at most 1000 by arrival; per (from → to) pair at most 100
// filed under `to`; a replay set of ids whose envelope timestamp is younger than 10 minutes.
import type { ChatEnvelope } from './envelope.js';

export interface ChatStoreLimits {
  perAccount: number;
  perPair: number;
  replayIds: number;
  /** Ids whose envelope timestamp is older than this are pruned from the replay set. */
  replayWindowNs: bigint;
}

export const DEFAULT_CHAT_STORE_LIMITS: ChatStoreLimits = {
  perAccount: 1000,
  perPair: 100,
  replayIds: 100_000,
  replayWindowNs: 600_000_000_000n,
};

const REPLAY_PRUNE_INTERVAL_NS = 10_000_000_000n;

type StoredListener = (envelope: ChatEnvelope) => void;

export class ChatStore {
  /** account → (id → envelope), in arrival order. */
  private readonly byAccount = new Map<string, Map<string, ChatEnvelope>>();
  /** `${to}|${from}` → ids filed under `to` from that sender, in arrival order. */
  private readonly byPair = new Map<string, Set<string>>();
  /** id → envelope timestamp. */
  private readonly seen = new Map<string, bigint>();
  private readonly listeners = new Set<StoredListener>();
  private lastPruneNs: bigint | null = null;

  constructor(
    private readonly now: () => bigint,
    private readonly limits: ChatStoreLimits = DEFAULT_CHAT_STORE_LIMITS,
  ) {}

  /** Listen to every newly stored envelope; returns the unsubscribe function. */
  onStored(listener: StoredListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Store a verified envelope. False when its id was already seen — or when the replay set is full
   * even after pruning (fails closed, reported as a duplicate).
   */
  add(envelope: ChatEnvelope): boolean {
    if (this.seen.has(envelope.id)) return false;
    this.pruneReplaySet(this.seen.size >= this.limits.replayIds);
    if (this.seen.size >= this.limits.replayIds) return false;
    this.seen.set(envelope.id, envelope.timestamp);

    this.file(envelope.to, envelope);
    const pairKey = `${envelope.to}|${envelope.from}`;
    let pair = this.byPair.get(pairKey);
    if (!pair) {
      pair = new Set();
      this.byPair.set(pairKey, pair);
    }
    pair.add(envelope.id);
    if (pair.size > this.limits.perPair) {
      const earliest = pair.values().next().value as string;
      this.unfile(envelope.to, earliest);
    }
    if (envelope.from !== envelope.to) this.file(envelope.from, envelope);

    for (const listener of this.listeners) listener(envelope);
    return true;
  }

  /** Envelopes under `account` with `timestamp > since`, oldest first (timestamp, then id). */
  messages(account: string, since: bigint): ChatEnvelope[] {
    const list = this.byAccount.get(account);
    if (!list) return [];
    const out: ChatEnvelope[] = [];
    for (const e of list.values()) if (e.timestamp > since) out.push(e);
    return out.sort((a, b) => (a.timestamp !== b.timestamp ? (a.timestamp < b.timestamp ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Every account this node holds messages for, ascending. */
  accounts(): string[] {
    return [...this.byAccount.keys()].sort();
  }

  /** Distinct counterparties of the envelopes under `account` (never the account itself), ascending. */
  counterparties(account: string): string[] {
    const list = this.byAccount.get(account);
    if (!list) return [];
    const others = new Set<string>();
    for (const e of list.values()) {
      const other = e.from === account ? e.to : e.from;
      if (other !== account) others.add(other);
    }
    return [...others].sort();
  }

  private file(account: string, envelope: ChatEnvelope): void {
    let list = this.byAccount.get(account);
    if (!list) {
      list = new Map();
      this.byAccount.set(account, list);
    }
    list.set(envelope.id, envelope);
    if (list.size > this.limits.perAccount) {
      this.unfile(account, list.keys().next().value as string);
    }
  }

  /** Remove one envelope from one account's list (and from that account's pair quota). */
  private unfile(account: string, id: string): void {
    const list = this.byAccount.get(account);
    const envelope = list?.get(id);
    if (!list || !envelope) return;
    list.delete(id);
    if (list.size === 0) this.byAccount.delete(account);
    if (envelope.to === account) {
      const pairKey = `${envelope.to}|${envelope.from}`;
      const pair = this.byPair.get(pairKey);
      pair?.delete(id);
      if (pair && pair.size === 0) this.byPair.delete(pairKey);
    }
  }

  private pruneReplaySet(force: boolean): void {
    const now = this.now();
    if (!force && this.lastPruneNs !== null && now - this.lastPruneNs < REPLAY_PRUNE_INTERVAL_NS) return;
    this.lastPruneNs = now;
    const cutoff = now - this.limits.replayWindowNs;
    for (const [id, ts] of this.seen) if (ts < cutoff) this.seen.delete(id);
  }
}
