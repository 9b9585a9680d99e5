// Replays the whole devnet block scenario of the vectors through ledger.submit, with the clock at
// each block's timestamp, checking state against the leases.md formulas after every step.
import { describe, expect, it } from 'vitest';
import { leaseCost, leaseStake, emission } from '../../ledger/state/lease-math.js';
import type { Block } from '../../ledger/types.js';
import type { Ledger } from '../../ledger/ledger.js';
import { DEFAULT_POW, Obj, dev, devnetCertificate, openTestLedger, vectors } from './ledger-helpers.js';
import { parseBlockJson } from '../../ledger/codec/block.js';
import type { JsonValue } from '../../ledger/codec/json.js';

const D1 = dev(1).address;
const D2 = dev(2).address;
const D6 = dev(6).address;
const DAO = '33c2007eb82f535639766c0a8ac5240e42b90546ae66d05d59130b88d478253d';

function devnetScenario(): { name: string; block: Block }[] {
  return (vectors.block_vectors as Obj[])
    .filter((v) => v.network_id === 'devnet')
    .map((v) => ({ name: v.name as string, block: parseBlockJson(v.block as JsonValue) }));
}

function expectConserved(ledger: Ledger): void {
  const s = ledger.supply();
  expect(s.notes).toEqual([]);
  expect(s.conserved).toBe(true);
  for (const a of Object.values(s.assets)) expect(a.accounted).toBe(a.created);
}

describe('devnet block vectors, replayed in order after the genesis', () => {
  it('accepts every block and keeps balances, pending, leases and supply right at each step', () => {
    // The vector nonces are valid at the default difficulty, so replay with PoW fully on.
    const t = openTestLedger({ powDifficulty: DEFAULT_POW, identitySeed: dev(1).seed, stabilityWindowNs: 0n });
    const { ledger, clock } = t;
    ledger.certificates.add(devnetCertificate(), { admitUnopened: true });
    const cert = devnetCertificate();
    expectConserved(ledger);

    const byName = new Map<string, Block>();
    for (const { name, block } of devnetScenario()) {
      clock.ns = block.timestamp;
      const res = ledger.submit(block);
      expect(res.status, name).toBe('applied');
      byName.set(name, block);
      // dev1 holds all the weight: every block is finalized by its own vote at once.
      expect(ledger.getBlock(block.hash)?.finalized, name).toBe(true);
      expect(ledger.frontier(block.account), name).toBe(block.hash);
      expectConserved(ledger);

      const lease1 = byName.get('lease')?.hash;
      switch (name) {
        case 'send_xe_with_memo':
          expect(ledger.runningBalance(D1, 'XE')).toBe(41_999_000_000_000n);
          expect(ledger.pendingFor(D6)).toEqual([
            { send_hash: block.hash, source: D1, destination: D6, amount: 1_000_000_000n, asset: 'XE', timestamp: block.timestamp },
          ]);
          break;
        case 'open_receive_declares_key':
          expect(ledger.runningBalance(D6, 'XE')).toBe(1_000_000_000n);
          expect(ledger.pendingFor(D6)).toEqual([]);
          expect(ledger.publicKeyOf(D6)).toBe(dev(6).pub);
          // dev6 delegates its XE to dev1: the weight is again the whole supply.
          expect(ledger.delegation().weights).toEqual({ [D1]: 42_000_000_000_000n });
          break;
        case 'mint_open_declares_key':
          expect(ledger.runningBalance(D2, 'XUSD')).toBe(5_000_000_000n);
          expect(ledger.supply().assets.XUSD!.minted).toBe(5_000_000_000n);
          break;
        case 'receive_xusd':
          expect(ledger.balances(D6).balances).toEqual({ XE: 1_000_000_000n, XUSD: 1_000_000_000n });
          break;
        case 'receive_xusd_provider':
          expect(ledger.runningBalance(D1, 'XUSD')).toBe(100_000_000n);
          break;
        case 'burn_xe_with_memo':
          expect(ledger.runningBalance(D6, 'XE')).toBe(998_500_000n);
          expect(ledger.supply().assets.XE!.burned).toBe(1_500_000n);
          break;
        case 'lease': {
          const cost = leaseCost(block, cert.price_multiplier_milli);
          expect(cost).toBe(3334n);
          const l = ledger.lease(block.hash)!;
          expect(l.state).toBe('created');
          expect(l.cost).toBe(cost);
          expect(l.consumer).toBe(D6);
          expect(l.provider).toBe(D1);
          expect(l.expires_at).toBe(0n);
          expect(ledger.pendingFor(D1).map((p) => [p.send_hash, p.amount])).toEqual([[block.hash, cost]]);
          expect(ledger.runningBalance(D6, 'XUSD')).toBe(1_000_000_000n - cost);
          break;
        }
        case 'lease_accept': {
          const l = ledger.lease(lease1!)!;
          expect(l.state).toBe('accepted');
          expect(l.stake).toBe(leaseStake(3334n, 5n));
          expect(l.stake).toBe(667n);
          expect(l.start_time).toBe(block.attestations[0]!.timestamp);
          expect([l.locked_r, l.locked_payout_cap, l.locked_twap_milli]).toEqual([2000n, 0n, 0n]);
          expect(l.expires_at).toBe(l.start_time + 300n * 1_000_000_000n);
          expect(ledger.runningBalance(D1, 'XUSD')).toBe(100_000_000n - 667n);
          expect(ledger.supply().assets.XUSD!.locked_stake).toBe(667n);
          expect(ledger.reputation(D1)!.leases_accepted_as_provider).toBe(1n);
          break;
        }
        case 'lease_renew': {
          const l = ledger.lease(lease1!)!;
          expect(l.renewals).toHaveLength(1);
          expect(l.renewals[0]!.cost).toBe(leaseCost({ ...l, duration: 60n }, 1000n));
          expect(l.effective_duration).toBe(360n);
          expect(ledger.pendingFor(D1).find((p) => p.send_hash === lease1)!.amount).toBe(3334n + 667n);
          break;
        }
        case 'lease_settle': {
          const l = ledger.lease(lease1!)!;
          expect(l.state).toBe('settled');
          expect(l.settled).toBe(true);
          expect(block.amount).toBe(emission(3334n, 2000n, 0n, 0n) + emission(667n, 2000n, 0n, 0n));
          expect(ledger.runningBalance(D1, 'XE')).toBe(41_999_000_000_000n + 8002n);
          // The stake came back to the provider's XUSD running balance (§17.1).
          expect(ledger.runningBalance(D1, 'XUSD')).toBe(100_000_000n);
          expect(ledger.pendingFor(D1)).toEqual([]);
          const s = ledger.supply();
          expect(s.assets.XE!.emitted).toBe(8002n);
          expect(s.assets.XUSD!.escrow_burned).toBe(4001n);
          expect(s.assets.XUSD!.locked_stake).toBe(0n);
          expect(ledger.reputation(D1)!.lease_seconds_settled_as_provider).toBe(360n);
          break;
        }
        case 'lease_cancel': {
          const l = ledger.lease(byName.get('lease_for_cancel')!.hash)!;
          expect(l.state).toBe('cancelled');
          expect(l.settled).toBe(false);
          expect(ledger.runningBalance(D6, 'XUSD')).toBe(999_995_999n);
          expect(ledger.reputation(D6)!.leases_cancelled_as_consumer).toBe(1n);
          break;
        }
        case 'lease_accept_after_settle': {
          const l = ledger.lease(byName.get('lease_for_force_settle')!.hash)!;
          expect(l.state).toBe('accepted');
          expect(l.stake).toBe(leaseStake(667n, 5n));
          expect(ledger.runningBalance(D1, 'XUSD')).toBe(100_000_000n - 134n);
          break;
        }
        case 'lease_force_settle': {
          const l = ledger.lease(byName.get('lease_for_force_settle')!.hash)!;
          expect(l.state).toBe('unfulfilled');
          expect(l.settled).toBe(true);
          expect(ledger.runningBalance(D6, 'XUSD')).toBe(999_995_999n);
          const s = ledger.supply();
          expect(s.assets.XUSD!.stake_forfeited).toBe(134n);
          expect(s.assets.XUSD!.locked_stake).toBe(0n);
          expect(ledger.reputation(D1)!.leases_unfulfilled_as_provider).toBe(1n);
          break;
        }
        case 'multisig_open':
          expect(ledger.keyset(DAO)).toEqual(block.keyset);
          break;
        case 'multisig_update':
          expect(ledger.keyset(DAO)).toEqual(block.keyset);
          expect(ledger.keyset(DAO)!.threshold).toBe(3);
          break;
      }
    }
    expect(byName.size).toBe(20);
    const final = ledger.supply();
    expect(final.assets.XUSD!.created).toBe(5_250_000_000n);
    expect(final.assets.XE!.created).toBe(42_000_000_000_000n + 8002n);
    expect(ledger.stats().unfinalized_positions).toBe(0);
    expect(ledger.pending()).toEqual([]);

    // Everything survives a reopen of the same file.
    const before = {
      supply: ledger.supply(),
      leases: ledger.leases({}),
      d1: ledger.balances(D1),
      d6: ledger.balances(D6),
      chain: ledger.accountChain(D6),
    };
    const t2 = t.reopen();
    expect(t2.ledger.supply()).toEqual(before.supply);
    expect(t2.ledger.leases({})).toEqual(before.leases);
    expect(t2.ledger.balances(D1)).toEqual(before.d1);
    expect(t2.ledger.balances(D6)).toEqual(before.d6);
    expect(t2.ledger.accountChain(D6)).toEqual(before.chain);
    expect(t2.ledger.certificates.get(devnetCertificate().hash)).not.toBeNull();
    // Resubmitting an applied block is a duplicate (no change).
    const last = devnetScenario().at(-1)!.block;
    expect(t2.ledger.submit(last).status).toBe('duplicate');
    t2.close();
  });
});
