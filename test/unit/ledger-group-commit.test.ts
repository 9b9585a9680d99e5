// Group commit (Ledger.batch / submitMany): many blocks, one SQLite transaction; events and results
// only after the commit; a rolled-back batch leaves memory exactly as the tables are.
import { beforeEach, describe, expect, it } from 'vitest';
import { LedgerError } from '../../ledger/errors.js';
import type { LedgerEvent, SubmitResult } from '../../ledger/service.js';
import type { Block } from '../../ledger/types.js';
import { Chains, dev, openTestLedger, type TestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D7 = dev(7);
const D8 = dev(8);

let t: TestLedger;
let c: Chains;
let events: LedgerEvent[];
beforeEach(() => {
  t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
  c = new Chains(t);
  events = [];
  t.ledger.subscribe((e) => events.push(e));
});

/** dev1 sends `amounts` in a row (not submitted), each to `to`. */
const sends = (to: string, amounts: bigint[]): Block[] => c.sendsAhead(D1, amounts.map((amount) => ({ to, amount })));
const openingReceive = (who: typeof D7, send: Block): Block => c.openingReceive(who, send, D1.address);

const applied = (events: LedgerEvent[]) => events.filter((e) => e.kind === 'block.applied').map((e) => (e as { block: Block }).block.hash);

describe('submitMany', () => {
  it('applies dependent blocks in order, reports rejections in place, and everything it reports is in the reopened store', () => {
    const [s1, s2] = sends(D7.address, [1000n, 2000n]);
    const r7 = openingReceive(D7, s1!);
    const badReceive = { ...openingReceive(D8, s2!), balance: 5n }; // wrong destination and balance: rejected
    const results = t.ledger.submitMany([s1!, s2!, r7, badReceive]);

    expect(results.slice(0, 3).map((r) => (r as SubmitResult).status)).toEqual(['applied', 'applied', 'applied']);
    expect(results[3]).toBeInstanceOf(LedgerError);
    expect(applied(events)).toEqual([s1!.hash, s2!.hash, r7.hash]);
    // The lone representative finalizes each block by its own vote within the batch.
    expect(t.ledger.getBlock(r7.hash)?.finalized).toBe(true);

    t = t.reopen({ identitySeed: D1.seed, stabilityWindowNs: 0n });
    for (const b of [s1!, s2!, r7]) expect(t.ledger.getBlock(b.hash)?.finalized).toBe(true);
    expect(t.ledger.getBlock(badReceive.hash)).toBeNull();
    expect(t.ledger.runningBalance(D7.address, 'XE')).toBe(1000n);
  });

  it('an empty batch commits nothing and succeeds', () => {
    expect(t.ledger.submitMany([])).toEqual([]);
    expect(events).toEqual([]);
  });
});

describe('batch', () => {
  it('delivers events only once the batch has committed', () => {
    const [s1] = sends(D7.address, [1000n]);
    t.ledger.batch(() => {
      t.ledger.submit(s1!);
      expect(events).toEqual([]);
    });
    expect(applied(events)).toEqual([s1!.hash]);
  });

  it('a batch that rolls back after applying blocks leaves the ledger as the tables are, with no events', () => {
    const before = { frontier: c.frontier(D1), balance: c.balance(D1, 'XE'), stats: t.ledger.stats(), supply: t.ledger.supply() };
    const [s1] = sends(D7.address, [1000n]);
    expect(() =>
      t.ledger.batch(() => {
        t.ledger.submit(s1!);
        expect(c.frontier(D1)).toBe(s1!.hash);
        throw new Error('disk gone');
      }),
    ).toThrow('disk gone');

    expect(events).toEqual([]);
    expect(c.frontier(D1)).toBe(before.frontier);
    expect(c.balance(D1, 'XE')).toBe(before.balance);
    expect(t.ledger.getBlock(s1!.hash)).toBeNull();
    expect(t.ledger.pendingFor(D7.address)).toEqual([]);
    expect(t.ledger.stats()).toEqual(before.stats);
    expect(t.ledger.supply()).toEqual(before.supply);
    expect(t.ledger.newestBlocks(1000).some((b) => b.hash === s1!.hash)).toBe(false);

    // The same block is accepted afterwards, as if never seen.
    expect(t.ledger.submit(s1!).status).toBe('applied');
    expect(t.ledger.getBlock(s1!.hash)?.finalized).toBe(true);
  });
});
