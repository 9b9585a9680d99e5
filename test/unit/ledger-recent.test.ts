// The newest-blocks cache (ledger/state/recent.ts): kept on apply, reseeded from the chains at start.
import { describe, expect, it } from 'vitest';
import { RecentBlocks } from '../../ledger/state/recent.js';
import { emptyBlock, type Block } from '../../ledger/types.js';
import type { AccountState } from '../../ledger/state/records.js';
import { Chains, SECOND, dev, openTestLedger } from './ledger-helpers.js';

function newestFirst(blocks: Block[]): Block[] {
  return [...blocks].sort((x, y) => (x.timestamp !== y.timestamp ? (x.timestamp > y.timestamp ? -1 : 1) : x.hash < y.hash ? -1 : 1));
}

describe('recent blocks', () => {
  it('seeds exactly the newest blocks from chains with equal timestamps', () => {
    // Three chains; timestamps never decrease along a chain, with many ties across and within chains.
    const chains = new Map<string, Block[]>();
    let n = 0;
    for (const [address, stamps] of [
      ['a', [1n, 5n, 5n, 9n, 9n]],
      ['b', [2n, 5n, 9n, 9n]],
      ['c', [9n, 9n, 9n]],
    ] as const) {
      chains.set(
        address,
        stamps.map((timestamp) => ({ ...emptyBlock('send'), account: address, timestamp, hash: ((n * 7919) % 97).toString(16).padStart(64, '0') + String(n++) })),
      );
    }
    const accounts = [...chains].map(([address, bs]) => ({ address, height: bs.length, lastTimestamp: bs.at(-1)!.timestamp, frontier: bs.at(-1)!.hash }) as AccountState);
    const all = [...chains.values()].flat();
    for (const capacity of [1, 3, 5, 8, 20]) {
      const r = new RecentBlocks(capacity);
      r.seed(accounts, (address, height) => chains.get(address)![height - 1]);
      expect(r.newest(100).map((b) => b.hash), `capacity ${capacity}`).toEqual(newestFirst(all).slice(0, capacity).map((b) => b.hash));
    }
    const r = new RecentBlocks(3);
    r.seed(accounts, (address, height) => chains.get(address)![height - 1]);
    const late = { ...emptyBlock('send'), timestamp: 10n, hash: 'f'.repeat(64) };
    r.add(late);
    r.add({ ...emptyBlock('send'), timestamp: 0n, hash: '0'.repeat(64) });
    expect(r.newest(3).map((b) => b.hash)).toEqual(newestFirst([...all, late]).slice(0, 3).map((b) => b.hash));
  });

  it('serves the ledger’s newest blocks, the same after a restart', () => {
    const t = openTestLedger();
    const c = new Chains(t);
    c.fund(dev(6), 1000n, 0n);
    for (let i = 0; i < 5; i++) {
      t.clock.ns += SECOND;
      c.send(dev(6), dev(7), 1n);
      c.send(dev(1), dev(8), 1n);
    }
    const all = [dev(1), dev(6)].flatMap((k) => t.ledger.accountChain(k.address).blocks.map((b) => b.block));
    const expected = newestFirst(all).map((b) => b.hash);
    expect(t.ledger.newestBlocks(1000).map((b) => b.hash)).toEqual(expected);
    expect(t.ledger.newestBlocks(3).map((b) => b.hash)).toEqual(expected.slice(0, 3));
    const t2 = t.reopen();
    expect(t2.ledger.newestBlocks(1000).map((b) => b.hash)).toEqual(expected);
    t2.close();
  });
});
