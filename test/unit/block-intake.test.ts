// BlockIntake: batching, order, group commit, and that the worker check is only a shortcut — the
// ledger still decides, with its exact messages. The checker here runs in-process (the real worker
// pool is tested against the compiled tree in test/integration/verify-pool.test.ts).
import { beforeEach, describe, expect, it } from 'vitest';
import { BlockIntake, IntakeBusyError, MAX_QUEUED } from '../../agent/intake/block-intake.js';
import type { BatchChecks, BatchVerdicts, IntakeChecker, PowItem, SignatureItem } from '../../agent/intake/verify-pool.js';
import { verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import { powValue } from '../../ledger/crypto/pow.js';
import { LedgerError } from '../../ledger/errors.js';
import type { SubmitResult } from '../../ledger/service.js';
import type { Block } from '../../ledger/types.js';
import { build, Chains, dev, openTestLedger, type TestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D7 = dev(7);

class InProcessChecker implements IntakeChecker {
  checked: SignatureItem[][] = [];
  powChecked: PowItem[][] = [];
  constructor(
    private readonly verdict: (item: SignatureItem) => boolean | 'fail' = ([p, h, s]) => verifyEd25519(p, Buffer.from(h, 'hex'), s),
    private readonly pow: (item: PowItem) => bigint = ([nonce, hash]) => powValue(nonce, hash),
  ) {}
  async check({ signatures, pow }: BatchChecks): Promise<BatchVerdicts> {
    this.checked.push(signatures);
    this.powChecked.push(pow);
    const verdicts = signatures.map(this.verdict);
    if (verdicts.includes('fail')) throw new Error('worker died');
    return { signatures: verdicts as boolean[], pow: pow.map(this.pow) };
  }
  async close(): Promise<void> {}
}

let t: TestLedger;
let c: Chains;
let commits: number;
beforeEach(() => {
  t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
  c = new Chains(t);
  commits = 0;
  const submitMany = t.ledger.submitMany.bind(t.ledger);
  t.ledger.submitMany = (blocks, path) => {
    commits++;
    return submitMany(blocks, path);
  };
});

/** dev1 → D7 send, D7's opening receive, then a D7 → dev1 send behind it (three dependent blocks). */
function dependentBlocks(): Block[] {
  const send = build('send', { account: D1.address, previous: c.frontier(D1), timestamp: t.clock.ns, asset: 'XE', destination: D7.address, amount: 5000n, balance: c.balance(D1, 'XE') - 5000n }, 1);
  const open = build('receive', { account: D7.address, previous: '0', timestamp: t.clock.ns + 1n, asset: 'XE', source: send.hash, balance: 5000n, representative: D1.address }, 7);
  const back = build('send', { account: D7.address, previous: open.hash, timestamp: t.clock.ns + 2n, asset: 'XE', destination: D1.address, amount: 1000n, balance: 4000n }, 7);
  return [send, open, back];
}

describe('BlockIntake', () => {
  it('applies blocks submitted together as one group commit, in arrival order, after checking their signatures', async () => {
    const checker = new InProcessChecker();
    const intake = new BlockIntake(t.ledger, checker);
    const blocks = dependentBlocks();
    const results = await Promise.all(blocks.map((b) => intake.submit(b)));

    expect(results.map((r) => r.status)).toEqual(['applied', 'applied', 'applied']);
    expect(commits).toBe(1);
    // The third block's key comes from the opening block queued ahead of it.
    expect(checker.checked).toEqual([blocks.map((b): SignatureItem => [b.account === D1.address ? D1.pub : D7.pub, b.hash, b.signature])]);
    expect(checker.powChecked).toEqual([blocks.map((b): PowItem => [b.pow_nonce, b.hash])]);
    expect(c.frontier(D7)).toBe(blocks[2]!.hash);
    expect(t.ledger.getBlock(blocks[2]!.hash)?.finalized).toBe(true);
  });

  it('applies checked batches that wait together as one group commit, in arrival order', async () => {
    // Holds every check until released: two batches (8 leave at once, then 32) finish together.
    const held: (() => void)[] = [];
    const checker = new InProcessChecker();
    const holding: IntakeChecker = {
      check: (batch) => new Promise((resolve) => held.push(() => resolve(checker.check(batch)))),
      close: async () => {},
    };
    const intake = new BlockIntake(t.ledger, holding);
    const sends = c.sendsAhead(D1, Array.from({ length: 40 }, (_, i) => ({ to: D7.address, amount: BigInt(i + 1) })));
    const results = Promise.all(sends.map((b) => intake.submit(b)));
    await new Promise((r) => setImmediate(r));
    expect(held.length).toBe(2);
    for (const release of held) release();
    expect((await results).map((r) => r.status)).toEqual(Array(40).fill('applied'));
    expect(commits).toBe(1);
    expect(c.frontier(D1)).toBe(sends[39]!.hash);
  });

  it('rejects only the failing submission, with the ledger’s own message', async () => {
    const intake = new BlockIntake(t.ledger, new InProcessChecker());
    const [send, open] = dependentBlocks();
    const forged = { ...open!, signature: send!.signature };
    const outcomes = await Promise.allSettled([intake.submit(send!), intake.submit(forged)]);
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { status: 'applied' } });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: expect.any(LedgerError) });
    expect(((outcomes[1] as PromiseRejectedResult).reason as LedgerError).message).toBe('verify: signature verification failed');
  });

  it('hands the checker’s PoW values to the ledger, which compares them with the difficulty', async () => {
    const intake = new BlockIntake(t.ledger, new InProcessChecker(undefined, () => 0n));
    const [send] = dependentBlocks();
    await expect(intake.submit(send!)).rejects.toThrow('invalid proof of work');
  });

  it('falls back to the ledger’s inline check when the checker says no or fails', async () => {
    for (const verdict of [() => false, () => 'fail' as const]) {
      t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
      c = new Chains(t);
      const intake = new BlockIntake(t.ledger, new InProcessChecker(verdict));
      const results = await Promise.all(dependentBlocks().map((b) => intake.submit(b)));
      expect(results.map((r) => r.status)).toEqual(['applied', 'applied', 'applied']);
    }
  });

  it('refuses submissions beyond its queue bound as busy, and serves the queued ones', async () => {
    const intake = new BlockIntake(t.ledger, null);
    const [send] = dependentBlocks();
    // Batches leave the queue for checking as they fill, so up to 8 batches of 32 more fit.
    const attempts = Array.from({ length: MAX_QUEUED + 8 * 32 + 1 }, () => intake.submit(send!));
    const settled = await Promise.allSettled(attempts);
    const firstRefused = settled.findIndex((r) => r.status === 'rejected');
    expect(firstRefused).toBeGreaterThanOrEqual(MAX_QUEUED);
    expect(settled.slice(firstRefused).every((r) => r.status === 'rejected' && r.reason instanceof IntakeBusyError)).toBe(true);
    const results = settled.slice(0, firstRefused).map((r) => (r as PromiseFulfilledResult<SubmitResult>).value);
    expect(results[0]!.status).toBe('applied');
    expect(results.slice(1).every((r) => r.status === 'duplicate')).toBe(true);
    expect((await intake.submit(send!)).status).toBe('duplicate');
  });

  it('works without a checker (group commit only) and answers a duplicate as such', async () => {
    const intake = new BlockIntake(t.ledger, null);
    const [send] = dependentBlocks();
    expect((await intake.submit(send!)).status).toBe('applied');
    expect((await intake.submit(send!)).status).toBe('duplicate');
    expect(commits).toBe(2);
  });
});
