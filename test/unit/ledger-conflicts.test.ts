// Conflicts (ledger.md §14) and votes / finalization (§15).
import { describe, expect, it } from 'vitest';
import { short } from '../../ledger/codec/hex.js';
import { signVote } from '../../ledger/crypto/vote.js';
import { GENESIS_SUPPLY } from '../../ledger/genesis/genesis.js';
import type { Block } from '../../ledger/types.js';
import { Chains, SECOND, dev, devnetCertificate, expectReject, leaseFields, openTestLedger, type TestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D6 = dev(6);
const D7 = dev(7);
const D8 = dev(8);

/** A ledger where nothing finalizes by itself (no identity), with dev6 funded. */
function passiveNode(): { t: TestLedger; c: Chains } {
  const t = openTestLedger();
  const c = new Chains(t);
  c.fund(D6, 1_000_000n, 0n);
  return { t, c };
}

function sibling(c: Chains, of: Block, f: Partial<Block>): Block {
  return c.next(of.type, D6, { ...of, previous: of.previous, hash: '', signature: '', ...f });
}

function finalVote(block: Block, t: TestLedger, n = 1) {
  return signVote(dev(n).seed, {
    rep_pub_key: dev(n).pub,
    block_hash: block.hash,
    conflict_account: block.account,
    conflict_previous: block.previous,
    timestamp: t.clock.ns,
    final: true,
  });
}

describe('conflict staging', () => {
  it('stages a sibling, records the conflict and holds the account', () => {
    const { t, c } = passiveNode();
    const a = c.send(D6, D7, 100n);
    const b = sibling(c, a, { destination: D8.address });
    t.clock.ns += SECOND;
    const res = c.submit(b);
    expect(res.status).toBe('staged');
    expect(t.ledger.frontier(D6.address)).toBe(a.hash);
    expect(t.ledger.conflicts()).toEqual([
      {
        account_address: D6.address,
        previous_hash: a.previous,
        block_hashes: [a.hash, b.hash],
        detected_at: t.clock.ns,
        // dev6 delegates to dev1 too; only the 100 in flight to dev7 is nobody's weight.
        weight_snapshot: { [D1.address]: GENESIS_SUPPLY - 100n },
        total_weight: GENESIS_SUPPLY - 100n,
      },
    ]);
    expect(t.ledger.conflictsFor(D6.address)).toHaveLength(1);
    expect(t.ledger.conflictsFor(D7.address)).toHaveLength(0);
    expect(t.ledger.getBlock(b.hash)).toEqual({ block: b, finalized: false });
    expect(t.ledger.blockFinalized(b.hash)).toBe(false);
    expect(t.ledger.stats().conflicts_open).toBe(1);
    // Re-submitting the staged sibling is a duplicate.
    expect(c.submit(b).status).toBe('duplicate');

    // Every other new block of the account waits for the resolution (retryable).
    expectReject(
      () => c.send(D6, D7, 1n),
      'account has unresolved conflict — block rejected pending resolution',
      true,
    );
    // The contested send cannot be received yet (HTTP 503 class).
    const rec = c.next('receive', D7, { asset: 'XE', source: a.hash, balance: 100n });
    expectReject(
      () => c.submit(rec),
      `source send ${short(a.hash)} is contested by an unresolved conflict — receive deferred pending resolution`,
      true,
    );

    // The conflict and its staged body survive a restart.
    const t2 = t.reopen();
    expect(t2.ledger.conflicts()).toHaveLength(1);
    expect(t2.ledger.getBlock(b.hash)?.block.hash).toBe(b.hash);
    t2.close();
  });

  it('runs staged validation at the parent position', () => {
    const { t, c } = passiveNode();
    const a = c.send(D6, D7, 100n);
    c.receive(D7, a, D1.address); // a second block on the chain is not needed; the balance check is at the parent
    const bad = sibling(c, a, { amount: 200n, balance: 999_900n });
    expectReject(() => c.submit(bad), 'balance mismatch: expected 999800, got 999900');
    const good = sibling(c, a, { amount: 200n, balance: 999_800n });
    expect(c.submit(good).status).toBe('staged');
    void t;
  });

  it('keeps at most 10 blocks per position', () => {
    const { c } = passiveNode();
    const a = c.send(D6, D7, 1n);
    for (let i = 2n; i <= 10n; i++) {
      expect(c.submit(sibling(c, a, { amount: i, balance: 1_000_000n - i })).status).toBe('staged');
    }
    expectReject(
      () => c.submit(sibling(c, a, { amount: 11n, balance: 1_000_000n - 11n })),
      `conflict at ${short(a.previous)} already has 10 blocks`,
    );
  });

  it('never forks below the final height', () => {
    const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
    const c = new Chains(t);
    c.fund(D6, 1000n, 0n);
    const a = c.send(D6, D7, 1n);
    expect(t.ledger.getBlock(a.hash)!.finalized).toBe(true);
    expectReject(
      () => c.submit(sibling(c, a, { amount: 2n, balance: 998n })),
      `block conflicts with finalized block ${short(a.hash)} — rejected`,
    );
  });
});

describe('votes and finalization', () => {
  it('a devnet node holding all weight finalizes each block by its own vote', () => {
    const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
    const c = new Chains(t);
    const votes: { final: boolean; block_hash: string }[] = [];
    t.ledger.subscribe((e) => {
      if (e.kind === 'vote.cast') votes.push(e.vote);
    });
    const s = c.send(D1, D6, 500n);
    expect(votes.map((v) => [v.block_hash, v.final])).toEqual([
      [s.hash, false],
      [s.hash, true],
    ]);
    const r = c.receive(D6, s, D1.address);
    expect(t.ledger.getBlock(r.hash)!.finalized).toBe(true);
    expect(t.ledger.balances(D6.address)).toEqual({ address: D6.address, balances: { XE: 500n }, spendable: { XE: 500n }, final_height: 1 });
    const st = t.ledger.stats();
    expect(st.finality_advances).toBe(2n);
    expect(st.unfinalized_positions).toBe(0);
  });

  it('waits for the stability window, then finalizes on tick', () => {
    const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 3n * SECOND });
    const c = new Chains(t);
    const s = c.send(D1, D6, 500n);
    expect(t.ledger.getBlock(s.hash)!.finalized).toBe(false);
    expect(t.ledger.stats().unfinalized_positions).toBe(1);
    // Spendable ignores the unfinalized outflow's effect… it subtracts it.
    expect(t.ledger.balances(D1.address).spendable).toEqual({ XE: GENESIS_SUPPLY - 500n });
    t.clock.ns += 2n * SECOND;
    t.ledger.tick();
    expect(t.ledger.getBlock(s.hash)!.finalized).toBe(false);
    t.clock.ns += SECOND;
    t.ledger.tick();
    expect(t.ledger.getBlock(s.hash)!.finalized).toBe(true);
  });

  it('a receive finalizes only after its source send', () => {
    const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 3n * SECOND });
    const c = new Chains(t);
    const s = c.send(D1, D6, 500n);
    const r = c.receive(D6, s, D1.address);
    t.clock.ns += 3n * SECOND;
    t.ledger.tick();
    expect(t.ledger.getBlock(s.hash)!.finalized).toBe(true);
    expect(t.ledger.getBlock(r.hash)!.finalized).toBe(true);
    expect(t.ledger.balances(D6.address).spendable).toEqual({ XE: 500n });
  });

  it('resolves a conflict by final votes of the representatives; the loser is dropped', () => {
    const { t, c } = passiveNode();
    const a = c.send(D6, D7, 100n);
    const b = sibling(c, a, { destination: D8.address });
    c.submit(b);
    // Final votes only count from representatives with weight: dev9 has none.
    expect(() => t.ledger.submitVote(finalVote(a, t, 9))).toThrow('vote: representative has no weight');
    expect(t.ledger.submitVote(finalVote(a, t))).toBeNull();
    expect(t.ledger.conflicts()).toEqual([]);
    expect(t.ledger.getBlock(a.hash)!.finalized).toBe(true);
    expect(t.ledger.getBlock(b.hash)).toBeNull();
    // The account is free again and the send can be received.
    c.receive(D7, a, D1.address);
    c.send(D6, D7, 1n);
    // A late vote for the resolved position is answered only by a node that votes itself.
    expect(t.ledger.submitVote(finalVote(a, t))).toBeNull();
  });

  it('writes a commit lock only while its position waits for other representatives', () => {
    const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
    const c = new Chains(t);
    const locks = () => t.db.prepare('SELECT account, previous, hash FROM ledger_commit_locks').all();
    // Locked and finalized in one pass: no row is ever written.
    const s = c.send(D1, D6, GENESIS_SUPPLY / 2n);
    expect(t.ledger.getBlock(s.hash)!.finalized).toBe(true);
    expect(locks()).toEqual([]);
    // D6 delegates to itself: this node now holds half the weight and can lock, not finalize alone.
    const r = c.receive(D6, s, D6.address);
    expect(t.ledger.getBlock(r.hash)!.finalized).toBe(false);
    const converge = signVote(D6.seed, { ...finalVote(r, t, 6), final: false });
    expect(t.ledger.submitVote(converge)).toBeNull();
    expect(locks()).toEqual([{ account: D6.address, previous: '0', hash: r.hash }]);
    expect(t.ledger.getBlock(r.hash)!.finalized).toBe(false);
    expect(t.ledger.blockFinalized(r.hash)).toBe(false);
    expect(t.ledger.blockFinalized('f'.repeat(64))).toBeNull();
    // The lock survives a restart, until the position is final.
    const t2 = t.reopen();
    expect(t2.ledger.submitVote(finalVote(r, t2, 6))).toBeNull();
    expect(t2.ledger.getBlock(r.hash)!.finalized).toBe(true);
    expect(t2.ledger.blockFinalized(r.hash)).toBe(true);
    expect(t2.db.prepare('SELECT hash FROM ledger_commit_locks').all()).toEqual([]);
    t2.close();
  });

  it('rejects votes that fail their checks', () => {
    const { t, c } = passiveNode();
    const a = c.send(D6, D7, 100n);
    const v = finalVote(a, t);
    expect(() => t.ledger.submitVote({ ...v, signature: finalVote(a, t, 2).signature })).toThrow('vote: signature verification failed');
    const old = signVote(D1.seed, { ...v, timestamp: t.clock.ns - 301n * SECOND });
    expect(() => t.ledger.submitVote(old)).toThrow('vote: timestamp out of range');
  });
});

describe('swap (conflict promotion, ledger.md §21)', () => {
  it('unwinds the loser, its descendants and the receives of its sends, then applies the winner', () => {
    const { t, c } = passiveNode();
    const before = t.ledger.supply();
    const a = c.send(D6, D7, 100n);
    const a2 = c.send(D6, D8, 50n);
    const rec = c.receive(D7, a, D1.address);
    expect(t.ledger.accounts(0, 100).map((x) => x.address)).toContain(D7.address);
    const b = sibling(c, a, { destination: D8.address, amount: 300n, balance: 999_700n });
    expect(c.submit(b).status).toBe('staged');
    expect(t.ledger.submitVote(finalVote(b, t))).toBeNull();

    expect(t.ledger.conflicts()).toEqual([]);
    expect(t.ledger.frontier(D6.address)).toBe(b.hash);
    expect(t.ledger.getBlock(b.hash)).toEqual({ block: b, finalized: true });
    for (const gone of [a, a2, rec]) expect(t.ledger.getBlock(gone.hash)).toBeNull();
    expect(t.ledger.frontier(D7.address)).toBeNull(); // its only block was the unwound receive
    expect(t.ledger.accounts(0, 100).map((a) => a.address)).not.toContain(D7.address);
    expect([...t.ledger.sortedFrontiers()].map(([address]) => address)).toEqual(t.ledger.accounts(0, 100).map((a) => a.address));
    expect(c.balance(D6, 'XE')).toBe(999_700n);
    expect(t.ledger.pending().map((p) => [p.send_hash, p.amount])).toEqual([[b.hash, 300n]]);
    const after = t.ledger.supply();
    expect(after.conserved).toBe(true);
    expect(after.assets.XE!.created).toBe(before.assets.XE!.created);
    expect(after.blocks).toBe(before.blocks + 1);
    expect(t.ledger.delegation().total_weight).toBe(GENESIS_SUPPLY - 300n);
    // The state survives a restart as swapped.
    const t2 = t.reopen();
    expect(t2.ledger.frontier(D6.address)).toBe(b.hash);
    expect(t2.ledger.supply()).toEqual(after);
    t2.close();
  });

  it('unwinds a burn descendant (the burned counter goes back)', () => {
    const { t, c } = passiveNode();
    const a = c.send(D6, D7, 100n);
    c.submit(c.next('burn', D6, { asset: 'XE', amount: 1n, balance: c.balance(D6, 'XE') - 1n }));
    expect(t.ledger.supply().assets.XE!.burned).toBe(1n);
    const b = sibling(c, a, { amount: 5n, balance: 1_000_000n - 5n });
    c.submit(b);
    t.ledger.submitVote(finalVote(b, t));
    expect(t.ledger.frontier(D6.address)).toBe(b.hash);
    expect(t.ledger.supply().assets.XE!.burned).toBe(0n);
    expect(t.ledger.supply().conserved).toBe(true);
  });

  it('refuses to unwind a lease descendant and keeps the conflict open', () => {
    const { t, c } = passiveNode();
    t.ledger.certificates.add(devnetCertificate(), { admitUnopened: true });
    c.fund(D6, 0n, 10_000n);
    const a = c.send(D6, D7, 100n);
    const lease = c.next('lease', D6, { ...leaseFields(), amount: 667n, balance: c.balance(D6, 'XUSD') - 667n });
    c.submit(lease);
    const b = sibling(c, a, { amount: 5n, balance: c.balance(D6, 'XE') + 100n - 5n });
    expect(c.submit(b).status).toBe('staged');
    t.ledger.submitVote(finalVote(b, t));
    expect(t.ledger.frontier(D6.address)).toBe(lease.hash);
    expect(t.ledger.conflicts()).toHaveLength(1);
    expect(t.ledger.getBlock(b.hash)).toEqual({ block: b, finalized: false });
    expect(t.ledger.getBlock(a.hash)!.block.hash).toBe(a.hash);
    expect(t.ledger.supply().conserved).toBe(true);
    // The refusal the tally swallowed (it retries after 30 s), asked for directly:
    const promote = (t.ledger as unknown as { promote(b: Block): void }).promote.bind(t.ledger);
    expectReject(() => promote(b), `swap: cannot unwind descendant "lease" ${short(lease.hash)}`);
    expect(t.ledger.frontier(D6.address)).toBe(lease.hash);
  });
});

describe('a representative node resolving a conflict itself', () => {
  for (const stagedWins of [true, false]) {
    it(`locks the lowest-hash candidate after the stability window (${stagedWins ? 'the staged sibling: swap' : 'the chain block'})`, () => {
      const t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 3n * SECOND });
      const c = new Chains(t);
      c.fund(D6, 1000n, 0n);
      t.clock.ns += 3n * SECOND;
      t.ledger.tick();
      const a = c.send(D6, D7, 10n);
      // Pick the sibling's amount so that the hash order is the one this case wants.
      let b = sibling(c, a, { amount: 20n, balance: 980n });
      for (let amount = 21n; b.hash < a.hash !== stagedWins; amount++) {
        b = sibling(c, a, { amount, balance: 1000n - amount });
      }
      expect(c.submit(b).status).toBe('staged');
      const [winner, loser] = stagedWins ? [b, a] : [a, b];
      t.clock.ns += 2n * SECOND;
      t.ledger.tick();
      expect(t.ledger.conflicts()).toHaveLength(1);
      t.clock.ns += SECOND;
      t.ledger.tick();
      expect(t.ledger.conflicts()).toEqual([]);
      expect(t.ledger.getBlock(winner.hash)).toEqual({ block: winner, finalized: true });
      expect(t.ledger.getBlock(loser.hash)).toBeNull();
      expect(t.ledger.frontier(D6.address)).toBe(winner.hash);
      expect(c.balance(D6, 'XE')).toBe(winner.balance);
      expect(t.ledger.pendingFor(winner.destination).map((p) => p.send_hash)).toEqual([winner.hash]);
      expect(t.ledger.supply().conserved).toBe(true);
    });
  }
});
