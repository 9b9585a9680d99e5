// Directory storage (chat-and-directory.md §8.3): keyed by account, newer timestamp wins, visible while
// `now − timestamp ≤ 30 min`, at most 100,000 records (least recently used evicted), listed by account.
import type { Registration } from './registration.js';

export const DIRECTORY_TTL_NS = 1_800_000_000_000n;
export const MAX_REGISTRATIONS = 100_000;

/** leases.md §9.4: the certificate end identifier of an address (hex characters 32…47 zeroed). */
export function endIdentifier(address: string): string {
  return `${address.slice(0, 32)}${'0'.repeat(16)}${address.slice(48)}`;
}

function lowerBound(sorted: string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class DirectoryStore {
  /** account → record; Map order is the LRU order (oldest use first). */
  private readonly records = new Map<string, Registration>();
  /** Accounts ascending (for key-cursor listings). */
  private readonly sorted: string[] = [];
  /** Certificate end identifier → accounts that map to it. */
  private readonly byEndId = new Map<string, Set<string>>();

  constructor(
    private readonly now: () => bigint,
    private readonly capacity = MAX_REGISTRATIONS,
    private readonly ttlNs = DIRECTORY_TTL_NS,
  ) {}

  /** Store `r` if it is newer than the held one; true when the store changed. */
  put(r: Registration): boolean {
    const held = this.records.get(r.account);
    if (held && r.timestamp <= held.timestamp) return false;
    if (held) {
      this.records.delete(r.account);
    } else {
      if (this.records.size >= this.capacity) this.remove(this.records.keys().next().value as string);
      this.sorted.splice(lowerBound(this.sorted, r.account), 0, r.account);
      const endId = endIdentifier(r.account);
      let set = this.byEndId.get(endId);
      if (!set) this.byEndId.set(endId, (set = new Set()));
      set.add(r.account);
    }
    this.records.set(r.account, r);
    return true;
  }

  /** The visible (unexpired) record of an account; a read counts as a use. */
  get(account: string): Registration | null {
    const r = this.records.get(account);
    if (!r || !this.visible(r)) return null;
    this.records.delete(account);
    this.records.set(account, r);
    return r;
  }

  /** Whether `id` is the end identifier of some visible registration's account. */
  hasEndIdentifier(id: string): boolean {
    const accounts = this.byEndId.get(id);
    if (!accounts) return false;
    for (const account of accounts) {
      const r = this.records.get(account);
      if (r && this.visible(r)) return true;
    }
    return false;
  }

  /** Visible records with account > `after`, ascending, at most `limit`; `nextAfter` when more follow. */
  list(after: string | undefined, limit: number): { records: Registration[]; nextAfter?: string } {
    const records: Registration[] = [];
    let i = after === undefined ? 0 : lowerBound(this.sorted, after);
    if (after !== undefined && this.sorted[i] === after) i++;
    for (; i < this.sorted.length; i++) {
      const r = this.records.get(this.sorted[i]!)!;
      if (!this.visible(r)) continue;
      if (records.length === limit) return { records, nextAfter: records[records.length - 1]!.account };
      records.push(r);
    }
    return { records };
  }

  /** Drop every expired record (run every 60 s). */
  prune(): void {
    for (const [account, r] of this.records) if (!this.visible(r)) this.remove(account);
  }

  get size(): number {
    return this.records.size;
  }

  private visible(r: Registration): boolean {
    return this.now() - r.timestamp <= this.ttlNs;
  }

  private remove(account: string): void {
    if (!this.records.delete(account)) return;
    const i = lowerBound(this.sorted, account);
    if (this.sorted[i] === account) this.sorted.splice(i, 1);
    const endId = endIdentifier(account);
    const set = this.byEndId.get(endId);
    set?.delete(account);
    if (set && set.size === 0) this.byEndId.delete(endId);
  }
}
