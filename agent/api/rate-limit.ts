// Per-client token buckets, one table per class (api.md §14). Each table is an LRU over Map
// insertion order: bounded at 100,000 keys, least recently used evicted first, and keys idle for
// 5 minutes forgotten.

import type { RateClass } from './route.js';

interface Bucket {
  tokens: number;
  /** ms timestamp of the last refill */
  at: number;
}

export interface BucketSpec {
  /** tokens per second */
  rate: number;
  burst: number;
}

export const RATE_CLASSES: Readonly<Record<RateClass, BucketSpec>> = {
  read: { rate: 200, burst: 1000 },
  write: { rate: 10, burst: 50 },
  probe: { rate: 20, burst: 100 },
};

const MAX_KEYS = 100_000;
const IDLE_MS = 5 * 60_000;

export class BucketTable {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly spec: BucketSpec,
    private readonly maxKeys = MAX_KEYS,
  ) {}

  /** Take one token: 0 when granted, else the whole seconds until one is available (≥ 1). */
  take(key: string, nowMs: number): number {
    let b = this.buckets.get(key);
    if (b === undefined || nowMs - b.at >= IDLE_MS) {
      b = { tokens: this.spec.burst, at: nowMs };
    } else {
      this.buckets.delete(key);
      b.tokens = Math.min(this.spec.burst, b.tokens + ((nowMs - b.at) / 1000) * this.spec.rate);
      b.at = nowMs;
    }
    if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.spec.rate));
  }

  /** Drop keys idle for the idle period (the oldest are first in the map). */
  sweep(nowMs: number): void {
    for (const [key, b] of this.buckets) {
      if (nowMs - b.at < IDLE_MS) return;
      this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

export class RateLimiter {
  private readonly tables: Record<RateClass, BucketTable> = {
    read: new BucketTable(RATE_CLASSES.read),
    write: new BucketTable(RATE_CLASSES.write),
    probe: new BucketTable(RATE_CLASSES.probe),
  };
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const t of Object.values(this.tables)) t.sweep(now);
    }, 60_000);
    this.sweeper.unref();
  }

  /** 0 when allowed, else the Retry-After seconds. */
  take(cls: RateClass, key: string): number {
    return this.tables[cls].take(key, Date.now());
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
