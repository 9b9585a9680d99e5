// The newest blocks across all accounts (timestamp descending, then hash ascending), the cache the
// SPEC serves `GET /blocks/recent` from: at most 1000 blocks, kept in memory, no table index.
//
// Seeding at start is a k-way merge over the account chains: each chain's timestamps never
// decrease, so the newest blocks are found by walking back from the frontiers, always taking the
// account whose next block is newest — about `capacity` indexed block reads, whatever the size of
// the ledger.
import type { Block } from '../types.js';
import type { AccountState } from './records.js';

export const RECENT_CAPACITY = 1000;

/** Orders newer first: timestamp descending, then hash ascending. */
function before(a: { timestamp: bigint; hash: string }, b: { timestamp: bigint; hash: string }): boolean {
  return a.timestamp !== b.timestamp ? a.timestamp > b.timestamp : a.hash < b.hash;
}

interface Cursor {
  address: string;
  height: number;
  timestamp: bigint;
  hash: string;
}

/** Binary max-heap of chain cursors by `before`. */
class CursorHeap {
  private readonly items: Cursor[] = [];

  get size(): number {
    return this.items.length;
  }

  push(c: Cursor): void {
    const a = this.items;
    a.push(c);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }

  pop(): Cursor | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l]!, a[m]!)) m = l;
        if (r < a.length && before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

export class RecentBlocks {
  /** Oldest first: a block newer than every held one (the usual case) is appended. */
  private blocks: Block[] = [];

  constructor(private readonly capacity = RECENT_CAPACITY) {}

  /** Rebuild from the chains (`blockAt` reads one block by account and 1-based height). */
  seed(accounts: Iterable<AccountState>, blockAt: (address: string, height: number) => Block | undefined): void {
    const heap = new CursorHeap();
    for (const a of accounts) {
      if (a.height > 0) heap.push({ address: a.address, height: a.height, timestamp: a.lastTimestamp, hash: a.frontier });
    }
    const found: Block[] = [];
    // Take blocks newest first until `capacity` are found, then keep taking every block with the
    // boundary timestamp (equal timestamps order by hash, which a chain walk does not follow).
    for (let c = heap.pop(); c; c = heap.pop()) {
      if (found.length >= this.capacity && c.timestamp < found[this.capacity - 1]!.timestamp) break;
      const block = blockAt(c.address, c.height);
      if (!block) continue;
      found.push(block);
      const older = c.height > 1 ? blockAt(c.address, c.height - 1) : undefined;
      if (older) heap.push({ address: c.address, height: c.height - 1, timestamp: older.timestamp, hash: older.hash });
    }
    found.sort((x, y) => (before(x, y) ? 1 : -1));
    this.blocks = found.slice(Math.max(0, found.length - this.capacity));
  }

  add(block: Block): void {
    const a = this.blocks;
    if (a.length >= this.capacity && !before(block, a[0]!)) return;
    // Insert after every held block that is not newer.
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(a[mid]!, block)) hi = mid;
      else lo = mid + 1;
    }
    if (lo === a.length) a.push(block);
    else a.splice(lo, 0, block);
    if (a.length > this.capacity) a.shift();
  }

  /** Newest first. */
  newest(limit: number): Block[] {
    const n = Math.max(0, Math.min(limit, this.capacity));
    return this.blocks.slice(Math.max(0, this.blocks.length - n)).reverse();
  }
}
