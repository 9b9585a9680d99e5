// Delegation weights (ledger.md §16), spendable balances (§17.2), reputation (§18), stats.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { frontierFingerprint } from '../../agent/status.js';
import { GENESIS_SUPPLY } from '../../ledger/genesis/genesis.js';
import { buildBlock } from './statechain-helpers.js';
import { Chains, SECOND, dev, openTestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D6 = dev(6);
const D7 = dev(7);
const D8 = dev(8);

describe('delegation', () => {
  it('moves XE weight with balances and representatives; non-XE blocks keep it', () => {
    const t = openTestLedger();
    const c = new Chains(t);
    c.fund(D6, 1000n, 500n); // opens with representative dev1
    expect(t.ledger.delegation().weights).toEqual({ [D1.address]: GENESIS_SUPPLY - 0n });
    // dev6 re-delegates to dev8 on a send.
    const s = c.next('send', D6, { asset: 'XE', destination: D7.address, amount: 100n, balance: 900n, representative: D8.address });
    c.submit(s);
    expect(t.ledger.delegation().weights).toEqual({ [D1.address]: GENESIS_SUPPLY - 1000n, [D8.address]: 900n });
    // An XUSD block with an empty representative keeps both the delegation and the XE weight.
    c.send(D6, D7, 10n, 'XUSD');
    expect(t.ledger.delegation().weights[D8.address]).toBe(900n);
    // dev7 opens without a representative: its XE counts for nobody.
    c.receive(D7, s);
    const d = t.ledger.delegation();
    expect(d.total_weight).toBe(GENESIS_SUPPLY - 100n);
    expect(d.eligibility_restricted).toBe(false);
    expect(t.ledger.stats().representatives).toBe(2);
    expect(t.ledger.stats().delegation_underflows).toBe(0n);
  });

  it('honours a sys.representatives allowlist, failing open when it matches no weight', () => {
    const t = openTestLedger();
    const c = new Chains(t);
    c.fund(D6, 1000n, 0n);
    c.submit(c.next('send', D6, { asset: 'XE', destination: D7.address, amount: 1n, balance: 999n, representative: D8.address }));
    const set = (addresses: string[]) => {
      const sc = t.ledger.statechainImpl;
      t.clock.ns += SECOND;
      const v = `{"mode":"allowlist","addresses":[${addresses.map((a) => `"${a}"`).join(',')}]}`;
      sc.submit(buildBlock(sc.tip(), [{ action: 'set', key: 'sys.representatives', value: v }], [3, 4], t.clock.ns), 'live');
    };
    set([D8.address]);
    let d = t.ledger.delegation();
    expect(d.weights).toEqual({ [D8.address]: 999n });
    expect(d.ineligible_weights).toEqual({ [D1.address]: GENESIS_SUPPLY - 1000n });
    expect([d.total_weight, d.ineligible_weight, d.eligibility_restricted, d.eligibility_failed_open]).toEqual([999n, GENESIS_SUPPLY - 1000n, true, false]);
    set([D7.address]);
    d = t.ledger.delegation();
    expect(d.eligibility_failed_open).toBe(true);
    expect(d.total_weight).toBe(GENESIS_SUPPLY - 1000n + 999n);
  });
});

describe('spendable balance', () => {
  it('starts from the final watermark and subtracts unfinalized outflows only', () => {
    const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 3n * SECOND });
    const c = new Chains(t);
    c.fund(D6, 1000n, 0n);
    t.clock.ns += 3n * SECOND;
    t.ledger.tick();
    expect(t.ledger.balances(D6.address)).toEqual({ address: D6.address, balances: { XE: 1000n }, spendable: { XE: 1000n }, final_height: 1 });
    c.send(D6, D7, 300n); // unfinalized outflow
    const s2 = c.send(D1, D6, 50n);
    t.clock.ns += 3n * SECOND;
    t.ledger.tick(); // finalizes dev6's send and dev1's send
    c.receive(D6, s2); // unfinalized inflow: ignored
    expect(t.ledger.balances(D6.address)).toEqual({ address: D6.address, balances: { XE: 750n }, spendable: { XE: 700n }, final_height: 2 });
    // Nothing finalized: empty map.
    const t2 = openTestLedger();
    const c2 = new Chains(t2);
    c2.fund(D6, 10n, 0n);
    expect(t2.ledger.balances(D6.address).spendable).toEqual({});
  });
});

describe('reads', () => {
  it('lists accounts in address order as accounts open and after a restart; the fingerprint follows api.md §6.7', () => {
    const t = openTestLedger();
    const c = new Chains(t);
    const opened = [2, 3, 4, 5, 6, 7, 8, 9].map((n) => dev(n));
    const check = (ledger: typeof t.ledger) => {
      const all = ledger.accounts(0, 100);
      const addresses = all.map((a) => a.address);
      expect(addresses).toEqual([...addresses].sort());
      expect(ledger.accounts(2, 3)).toEqual(all.slice(2, 5));
      expect([...ledger.sortedFrontiers()]).toEqual(all.map((a) => [a.address, a.frontier, a.block_count]));
      const lines = all.map((a) => `${a.address}:${a.frontier}:${a.block_count}`).sort();
      expect(frontierFingerprint(ledger)).toBe(createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16));
    };
    for (const [i, key] of opened.entries()) {
      c.fund(key, 100n + BigInt(i), 0n);
      check(t.ledger);
      expect(t.ledger.accounts(0, 100)).toHaveLength(i + 2);
    }
    const t2 = t.reopen();
    check(t2.ledger);
    expect(t2.ledger.accounts(0, 100).map((a) => a.address)).toEqual(t.ledger.accounts(0, 100).map((a) => a.address));
    t2.close();
  });

  it('pages chains, accounts, frontiers and newest blocks', () => {
    const t = openTestLedger();
    const c = new Chains(t);
    c.fund(D6, 1000n, 0n);
    const sends = [1n, 2n, 3n].map((n) => {
      t.clock.ns += SECOND;
      return c.send(D6, D7, n);
    });
    const chain = t.ledger.accountChain(D6.address, 1, 2);
    expect(chain.total).toBe(4);
    expect(chain.blocks.map((b) => b.block.hash)).toEqual([sends[0]!.hash, sends[1]!.hash]);
    expect(t.ledger.newestBlocks(2).map((b) => b.hash)).toEqual([sends[2]!.hash, sends[1]!.hash]);
    const page = t.ledger.frontiers(undefined, 1);
    expect(page.entries).toHaveLength(1);
    expect(page.nextAfter).toBe(page.entries[0]![0]);
    const rest = t.ledger.frontiers(page.nextAfter, 10);
    expect(rest.nextAfter).toBeUndefined();
    expect(Object.fromEntries([...page.entries, ...rest.entries])).toEqual({
      [D1.address]: t.ledger.frontier(D1.address),
      [D6.address]: sends[2]!.hash,
    });
    const accounts = t.ledger.accounts();
    expect(accounts.map((a) => a.address)).toEqual([D1.address, D6.address].sort());
    expect(accounts.find((a) => a.address === D6.address)).toEqual({
      address: D6.address,
      balances: { XE: 994n },
      block_count: 4,
      frontier: sends[2]!.hash,
      last_block_timestamp: sends[2]!.timestamp,
    });
    expect(t.ledger.pendingFor(D7.address).map((p) => p.amount)).toEqual([1n, 2n, 3n]);
    expect(t.ledger.pending()).toHaveLength(3);
    const st = t.ledger.stats();
    expect([st.accounts, st.block_count, st.conflicts_open]).toEqual([2, 6, 0]);
    expect(t.ledger.keyset(D6.address)).toBeNull();
    expect(t.ledger.reputation(D6.address)).toBeNull();
    expect(t.ledger.reputations(undefined, 10)).toEqual({ entries: [] });
  });
});
