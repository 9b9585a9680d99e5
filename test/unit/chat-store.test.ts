import { describe, expect, it } from 'vitest';
import { ChatStore } from '../../agent/chat/store.js';
import type { ChatEnvelope } from '../../agent/chat/envelope.js';
import { TestClock } from './net-helpers.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);
let counter = 0;

/** Store-level envelopes: the store trusts its caller's verification, so only ids and parties matter. */
function env(from: string, to: string, timestamp: bigint): ChatEnvelope {
  counter++;
  return { id: counter.toString(16).padStart(64, '0'), from, pub_key: '', to, message: `m${counter}`, timestamp, signature: '', pow_nonce: 0n };
}

describe('ChatStore', () => {
  const T = 1_800_000_000_000_000_000n;

  it('files under to and from, lists oldest first by timestamp then id, filters since', () => {
    const store = new ChatStore(new TestClock(T).now);
    const late = env(A, B, T + 5n);
    const early = env(B, A, T + 1n);
    const tieX = env(A, B, T + 3n);
    const tieY = { ...env(A, B, T + 3n), id: '0'.repeat(63) + '0' };
    for (const e of [late, early, tieY, tieX]) expect(store.add(e)).toBe(true);
    expect(store.messages(A, 0n).map((e) => e.id)).toEqual([early.id, tieY.id, tieX.id, late.id]);
    expect(store.messages(B, T + 3n).map((e) => e.id)).toEqual([late.id]);
    expect(store.messages(C, 0n)).toEqual([]);
  });

  it('rejects a replayed id', () => {
    const store = new ChatStore(new TestClock(T).now);
    const e = env(A, B, T);
    expect(store.add(e)).toBe(true);
    expect(store.add({ ...e })).toBe(false);
    expect(store.messages(B, 0n)).toHaveLength(1);
  });

  it('per-account cap drops the earliest arrival, not the oldest timestamp', () => {
    const store = new ChatStore(new TestClock(T).now, { perAccount: 3, perPair: 100, replayIds: 1000, replayWindowNs: 600_000_000_000n });
    const first = env(A, B, T + 100n); // arrives first, newest timestamp
    store.add(first);
    const rest = [env(C, B, T + 1n), env(C, B, T + 2n), env(C, B, T + 3n)];
    for (const e of rest) store.add(e);
    const ids = store.messages(B, 0n).map((e) => e.id);
    expect(ids).toHaveLength(3);
    expect(ids).not.toContain(first.id);
    // still filed under its sender
    expect(store.messages(A, 0n).map((e) => e.id)).toEqual([first.id]);
  });

  it('per-pair quota: the 101st from one sender drops that pair’s earliest, sparing other senders', () => {
    const store = new ChatStore(new TestClock(T).now);
    const other = env(C, B, T);
    store.add(other);
    const flood = Array.from({ length: 101 }, (_, i) => env(A, B, T + BigInt(i + 1)));
    for (const e of flood) store.add(e);
    const underB = store.messages(B, 0n).map((e) => e.id);
    expect(underB).toHaveLength(101);
    expect(underB).toContain(other.id);
    expect(underB).not.toContain(flood[0]!.id);
    expect(underB).toContain(flood[100]!.id);
  });

  it('prunes replay ids older than 10 minutes and fails closed when still full', () => {
    const clock = new TestClock(T);
    const store = new ChatStore(clock.now, { perAccount: 1000, perPair: 100, replayIds: 2, replayWindowNs: 600_000_000_000n });
    const old1 = env(A, B, T);
    const old2 = env(A, B, T);
    expect(store.add(old1)).toBe(true);
    expect(store.add(old2)).toBe(true);
    expect(store.add(env(A, B, T))).toBe(false); // full, nothing prunable: fails closed
    clock.advance(600_000_000_001n);
    expect(store.add(env(A, B, clock.ns))).toBe(true); // old ids pruned
  });

  it('accounts and counterparties are sorted, never listing the account itself', () => {
    const store = new ChatStore(new TestClock(T).now);
    store.add(env(C, A, T));
    store.add(env(A, B, T));
    store.add(env(A, A, T)); // a note to self
    expect(store.accounts()).toEqual([A, B, C]);
    expect(store.counterparties(A)).toEqual([B, C]);
    expect(store.counterparties(B)).toEqual([A]);
    expect(store.counterparties('d'.repeat(64))).toEqual([]);
  });

  it('notifies listeners of newly stored envelopes only', () => {
    const store = new ChatStore(new TestClock(T).now);
    const seen: string[] = [];
    const stop = store.onStored((e) => seen.push(e.id));
    const e = env(A, B, T);
    store.add(e);
    store.add(e);
    stop();
    store.add(env(A, B, T));
    expect(seen).toEqual([e.id]);
  });
});
