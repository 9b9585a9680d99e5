// Lease family (ledger.md §12.5–§12.10, leases.md): each path (settle, cancel, force-settle, renew)
// with balances, escrow, stake and emission checked, and every documented rejection.
import { beforeEach, describe, expect, it } from 'vitest';
import { short } from '../../ledger/codec/hex.js';
import { emission, leaseCost, leaseStake } from '../../ledger/state/lease-math.js';
import type { Block } from '../../ledger/types.js';
import {
  Chains,
  SECOND,
  T0,
  attest,
  dev,
  devnetCertificate,
  expectReject,
  leaseFields,
  makeCertificate,
  openTestLedger,
  statechainGenesisVariant,
  type TestLedger,
} from './ledger-helpers.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS } from '../../ledger/genesis/devnet.js';

const D1 = dev(1);
const D2 = dev(2);
const D6 = dev(6);
const D7 = dev(7);
const CERT = devnetCertificate();
const GRACE = 30n * SECOND;
const GAP = 25n * SECOND;
const ESCROW_EXPIRY = 3600n * SECOND;

let t: TestLedger;
let c: Chains;

function setup(statechain = DEVNET_STATECHAIN_GENESIS): void {
  t = openTestLedger({ genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain } });
  c = new Chains(t);
  t.ledger.certificates.add(CERT, { admitUnopened: true });
  c.fund(D6, 1_000_000n, 1_000_000n);
  c.mint(100_000n);
  c.receive(D1, c.send(D2, D1, 100_000n, 'XUSD'));
}

const COST_60 = leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 60n }, 1000n);

function leaseBlock(f: Partial<Block> = {}, duration = 60n): Block {
  const cost = leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration }, 1000n);
  return c.next('lease', D6, { ...leaseFields(duration), amount: cost, balance: c.balance(D6, 'XUSD') - cost, ...f });
}

function openLease(duration = 60n): Block {
  const b = leaseBlock({}, duration);
  c.submit(b);
  return b;
}

function acceptBlock(lease: Block, f: Partial<Block> = {}, at = t.clock.ns): Block {
  const stake = leaseStake(lease.amount, 5n);
  return c.next('lease_accept', D1, {
    asset: 'XUSD',
    source: lease.hash,
    amount: stake,
    balance: c.balance(D1, 'XUSD') - stake,
    attestations: [attest(lease.hash, at)],
    certificate_hash: lease.certificate_hash,
    locked_r: 2000n,
    ...f,
  });
}

function accepted(duration = 60n): { lease: Block; start: bigint; expiry: bigint } {
  const lease = openLease(duration);
  t.clock.ns += SECOND;
  const start = t.clock.ns;
  c.submit(acceptBlock(lease));
  return { lease, start, expiry: start + duration * SECOND };
}

function settleBlock(lease: Block, amount: bigint, f: Partial<Block> = {}, at = t.clock.ns): Block {
  return c.next('lease_settle', D1, {
    asset: 'XE',
    source: lease.hash,
    amount,
    balance: c.balance(D1, 'XE') + amount,
    attestations: [attest(lease.hash, at)],
    ...f,
  });
}

function forceBlock(lease: Block, refund: bigint, f: Partial<Block> = {}, at = t.clock.ns): Block {
  return c.next('lease_force_settle', D6, {
    asset: 'XUSD',
    source: lease.hash,
    balance: c.balance(D6, 'XUSD') + refund,
    attestations: [attest(lease.hash, at)],
    ...f,
  });
}

function renewBlock(lease: Block, duration: bigint, f: Partial<Block> = {}, at = t.clock.ns): Block {
  const cost = leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration }, 1000n);
  return c.next('lease_renew', D6, {
    asset: 'XUSD',
    source: lease.hash,
    amount: cost,
    duration,
    balance: c.balance(D6, 'XUSD') - cost,
    attestations: [attest(lease.hash, at)],
    certificate_hash: CERT.hash,
    locked_r: 2000n,
    ...f,
  });
}

function escrowOf(lease: Block): bigint | undefined {
  return t.ledger.pendingFor(D1.address).find((p) => p.send_hash === lease.hash)?.amount;
}

describe('lease paths', () => {
  beforeEach(() => setup());

  it('settle: escrow burnt, XE emitted, stake returned; supply conserved throughout', () => {
    const xusd6 = c.balance(D6, 'XUSD');
    const xusd1 = c.balance(D1, 'XUSD');
    const xe1 = c.balance(D1, 'XE');
    const { lease, start, expiry } = accepted();
    const stake = leaseStake(COST_60, 5n);
    expect(c.balance(D6, 'XUSD')).toBe(xusd6 - COST_60);
    expect(c.balance(D1, 'XUSD')).toBe(xusd1 - stake);
    expect(escrowOf(lease)).toBe(COST_60);
    const l = t.ledger.lease(lease.hash)!;
    expect([l.state, l.stake, l.start_time, l.expires_at]).toEqual(['accepted', stake, start, expiry]);
    expect(t.ledger.supply().assets.XUSD!.locked_stake).toBe(stake);
    expect(t.ledger.supply().conserved).toBe(true);

    t.clock.ns = expiry + SECOND;
    const xe = emission(COST_60, 2000n, 0n, 0n);
    c.submit(settleBlock(lease, xe));
    expect(t.ledger.lease(lease.hash)!.state).toBe('settled');
    expect(c.balance(D1, 'XE')).toBe(xe1 + xe);
    expect(c.balance(D1, 'XUSD')).toBe(xusd1);
    expect(escrowOf(lease)).toBeUndefined();
    const s = t.ledger.supply();
    expect([s.assets.XE!.emitted, s.assets.XUSD!.escrow_burned, s.assets.XUSD!.locked_stake]).toEqual([xe, COST_60, 0n]);
    expect(s.conserved).toBe(true);
    const rep = t.ledger.reputation(D1.address)!;
    expect([rep.leases_accepted_as_provider, rep.leases_settled_as_provider, rep.lease_seconds_settled_as_provider]).toEqual([1n, 1n, 60n]);
    expect(rep.first_activity_at).toBe(start);
    expect(rep.last_activity_at).toBe(t.clock.ns);
  });

  it('cancel: only while created; escrow refunded', () => {
    const before = c.balance(D6, 'XUSD');
    const lease = openLease();
    c.submit(c.next('lease_cancel', D6, { asset: 'XUSD', source: lease.hash, balance: before }));
    const l = t.ledger.lease(lease.hash)!;
    expect([l.state, l.settled]).toEqual(['cancelled', false]);
    expect(c.balance(D6, 'XUSD')).toBe(before);
    expect(escrowOf(lease)).toBeUndefined();
    expect(t.ledger.supply().conserved).toBe(true);
    expect(t.ledger.reputation(D6.address)!.leases_cancelled_as_consumer).toBe(1n);
  });

  it('force-settle: refund of the escrow, stake forfeited', () => {
    const { lease, expiry } = accepted();
    const stake = leaseStake(COST_60, 5n);
    const xusd1 = c.balance(D1, 'XUSD');
    const xusd6 = c.balance(D6, 'XUSD');
    t.clock.ns = expiry + GRACE + GAP + 1n;
    c.submit(forceBlock(lease, COST_60));
    const l = t.ledger.lease(lease.hash)!;
    expect([l.state, l.settled]).toEqual(['unfulfilled', true]);
    expect(c.balance(D6, 'XUSD')).toBe(xusd6 + COST_60);
    expect(c.balance(D1, 'XUSD')).toBe(xusd1); // never returned
    const s = t.ledger.supply();
    expect([s.assets.XUSD!.stake_forfeited, s.assets.XUSD!.locked_stake]).toEqual([stake, 0n]);
    expect(s.conserved).toBe(true);
    expect(t.ledger.reputation(D6.address)!.leases_unfulfilled_as_consumer).toBe(1n);
  });

  it('renew: escrow grows, expiry moves, settle emits per segment', () => {
    const { lease, expiry } = accepted();
    t.clock.ns = expiry - 10n * SECOND;
    const renewCost = leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 120n }, 1000n);
    c.submit(renewBlock(lease, 120n));
    const l = t.ledger.lease(lease.hash)!;
    expect(l.effective_duration).toBe(180n);
    expect(l.expires_at).toBe(expiry + 120n * SECOND);
    expect(l.renewals).toEqual([
      { renew_hash: c.frontier(D6), duration: 120n, cost: renewCost, start_time: t.clock.ns, locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n },
    ]);
    expect(escrowOf(lease)).toBe(COST_60 + renewCost);
    // At the base expiry the lease is not yet settleable.
    t.clock.ns = expiry + SECOND;
    const xe = emission(COST_60, 2000n, 0n, 0n) + emission(renewCost, 2000n, 0n, 0n);
    expectReject(() => c.submit(settleBlock(lease, xe)), `lease not yet expired: need timestamp >= ${expiry + 120n * SECOND}, got ${t.clock.ns}`);
    t.clock.ns = expiry + 121n * SECOND;
    expectReject(() => c.submit(settleBlock(lease, 1n)), `lease_settle XE mismatch: expected ${xe} (segments=2), got 1`);
    c.submit(settleBlock(lease, xe));
    expect(t.ledger.supply().assets.XUSD!.escrow_burned).toBe(COST_60 + renewCost);
    expect(t.ledger.supply().conserved).toBe(true);
  });

  it('reports an accepted lease as expired after the refund window, without moving anything', () => {
    const { lease, expiry } = accepted();
    const at = expiry + ESCROW_EXPIRY;
    expect(t.ledger.lease(lease.hash, at - 1n)!.state).toBe('accepted');
    expect(t.ledger.lease(lease.hash, at)!.state).toBe('expired');
    expect(t.ledger.leases({ state: 'expired', now: at }).map((l) => l.lease_hash)).toEqual([lease.hash]);
    expect(escrowOf(lease)).toBe(COST_60);
    expect(t.ledger.supply().assets.XUSD!.locked_stake).toBe(leaseStake(COST_60, 5n));
  });

  it('never lets the provider receive a live escrow', () => {
    const lease = openLease();
    const b = c.next('receive', D1, { asset: 'XUSD', source: lease.hash, balance: c.balance(D1, 'XUSD') + COST_60 });
    expectReject(() => c.submit(b), `cannot receive a live lease escrow: ${short(lease.hash)}`);
  });
});

describe('lease rejections', () => {
  beforeEach(() => setup());

  it('lease: every rule in order', () => {
    const bal = c.balance(D6, 'XUSD');
    const l = (f: Partial<Block>, d = 60n) => leaseBlock(f, d);
    expectReject(() => c.submit(l({ asset: 'XE', balance: c.balance(D6, 'XE') - COST_60 })), 'lease block must have asset=XUSD');
    expectReject(() => c.submit(l({ destination: '' })), 'lease block must have a destination (provider)');
    expectReject(() => c.submit(l({ destination: D6.address })), 'cannot lease to self');
    expectReject(() => c.submit(l({ vcpus: 0n, memory_mb: 0n, disk_gb: 0n })), 'lease must request at least one resource (vcpus, memory, or disk)');
    expectReject(() => c.submit(l({ vcpus: 4097n })), 'lease vcpus must be <= 4096, got 4097');
    expectReject(() => c.submit(l({ memory_mb: 67_108_865n })), 'lease memory_mb must be <= 67108864, got 67108865');
    expectReject(() => c.submit(l({ disk_gb: 1_048_577n })), 'lease disk_gb must be <= 1048576, got 1048577');
    expectReject(() => c.submit(l({ duration: 4n })), 'lease duration must be >= 5 seconds');
    expectReject(() => c.submit(l({ duration: 31_536_001n })), 'lease duration must be <= 31536000 seconds');
    expectReject(() => c.submit(l({ access_pub_key: D6.pub })), 'lease access_pub_key must not be a signing key of the consumer account');
    expectReject(() => c.submit(l({ certificate_hash: '' })), 'lease block must include certificate_hash');
    expectReject(() => c.submit(l({ certificate_hash: D7.address })), `certificate ${short(D7.address)} not found`, true);
    const other = makeCertificate(D7, T0 - 100n * SECOND);
    t.ledger.certificates.add(other, { admitUnopened: true });
    expectReject(
      () => c.submit(l({ certificate_hash: other.hash })),
      `certificate ${short(other.hash)} belongs to ${short(D7.address)}, not lease destination ${short(D1.address)}`,
    );
    expectReject(() => c.submit(l({ amount: 1n, balance: bal - 1n })), `lease cost mismatch: expected ${COST_60} (multiplier 1000), got 1`);
    expectReject(() => c.submit(l({ previous: D1.address })), `previous mismatch: got ${short(D1.address)}, want ${short(c.frontier(D6))}`, true);
    expectReject(() => c.submit(l({ timestamp: t.clock.ns - 1n })), `block timestamp ${t.clock.ns - 1n} is before previous block timestamp ${t.clock.ns}`);
    expectReject(() => c.submit(l({ balance: 3n })), `lease balance mismatch: expected ${bal - COST_60}, got 3`);
    // A consumer without the XUSD.
    c.fund(D7, 1000n, 0n);
    const poor = c.next('lease', D7, { ...leaseFields(), amount: COST_60, balance: 0n });
    expectReject(() => c.submit(poor), `insufficient XUSD balance: have 0, need ${COST_60}`);
    // An opening lease block (declares its key) on an unopened account.
    const opener = c.next('lease', dev(8), { ...leaseFields(), amount: COST_60, previous: '0' });
    expectReject(() => c.submit(opener), `lease from unopened account: ${short(dev(8).address)}`, true);
  });

  it('lease: the certificate must be the active one at the block timestamp', () => {
    const future = makeCertificate(D1, T0 + 100n * SECOND);
    t.ledger.certificates.add(future);
    expectReject(
      () => c.submit(leaseBlock({ certificate_hash: future.hash })),
      `certificate ${short(future.hash)} not yet valid: issued_at ${future.issued_at}, block timestamp ${t.clock.ns}`,
    );
    const newer = makeCertificate(D1, T0 - 10n * SECOND, 2000n);
    t.ledger.certificates.add(newer);
    expect(t.ledger.certificates.active(D1.address, t.clock.ns)?.hash).toBe(newer.hash);
    const stale = leaseBlock();
    expectReject(
      () => c.submit(stale),
      `certificate ${short(CERT.hash)} superseded by ${short(newer.hash)} at block timestamp ${t.clock.ns}`,
    );
    // The sync path accepts any certificate of the provider covering the timestamp.
    expect(t.ledger.submit(stale, 'sync').status).toBe('applied');
    // The new price applies to leases on the new certificate.
    const cost2 = leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 60n }, 2000n);
    c.submit(leaseBlock({ certificate_hash: newer.hash, amount: cost2, balance: c.balance(D6, 'XUSD') - cost2 }));
    // After the devnet certificate expired.
    t.clock.ns = CERT.expires_at + SECOND;
    const t2 = c.next('lease', D6, { ...leaseFields(), amount: COST_60, balance: c.balance(D6, 'XUSD') - COST_60 });
    expectReject(() => c.submit(t2), `certificate ${short(CERT.hash)} expired: expires_at ${CERT.expires_at}, block timestamp ${t.clock.ns}`);
  });

  it('lease_accept: every rule in order', () => {
    const lease = openLease();
    const send = c.send(D6, D7, 5n);
    t.clock.ns += SECOND;
    const stake = leaseStake(COST_60, 5n);
    const a = (f: Partial<Block>) => acceptBlock(lease, f);
    expectReject(() => c.submit(a({ asset: 'XE', balance: c.balance(D1, 'XE') })), 'lease_accept must have asset=XUSD');
    expectReject(() => c.submit(a({ source: '' })), 'lease_accept must reference a lease (source)');
    expectReject(() => c.submit(a({ source: D7.address })), `source lease block not found: ${short(D7.address)}`, true);
    expectReject(() => c.submit(a({ source: send.hash })), `lease_accept source ${short(send.hash)} is not a lease block`);
    c.fund(D7, 0n, 1000n);
    const byD7 = c.next('lease_accept', D7, { ...a({}), account: D7.address, previous: c.frontier(D7), balance: 1000n - stake }, 7);
    expectReject(() => c.submit(byD7), 'lease_accept: provider account mismatch');
    expectReject(() => c.submit(a({ amount: 1n, balance: c.balance(D1, 'XUSD') - 1n })), `lease_accept stake mismatch: expected ${stake}, got 1`);
    expectReject(() => c.submit(a({ previous: D7.address })), `previous mismatch: got ${short(D7.address)}, want ${short(c.frontier(D1))}`, true);
    expectReject(() => c.submit(a({ balance: 9n })), `lease_accept balance mismatch: expected ${c.balance(D1, 'XUSD') - stake}, got 9`);
    expectReject(() => c.submit(a({ attestations: [] })), 'lease_accept attestation: need 1 attestations, got 0');
    expectReject(
      () => c.submit(a({ attestations: [attest(lease.hash, t.clock.ns, 7)] })),
      'lease_accept attestation: only 0 valid attestations from trusted timekeepers, need 1',
    );
    const skewed = a({ attestations: [attest(lease.hash, t.clock.ns - 11n * SECOND)] });
    expectReject(() => c.submit(skewed), 'lease_accept attestation: only 0 valid attestations from trusted timekeepers, need 1');
    const forged = a({ attestations: [{ ...attest(lease.hash, t.clock.ns), timestamp: t.clock.ns + 1n }] });
    expectReject(() => c.submit(forged), 'lease_accept attestation: only 0 valid attestations from trusted timekeepers, need 1');
    expectReject(() => c.submit(a({ certificate_hash: '' })), 'lease_accept must include certificate_hash');
    expectReject(
      () => c.submit(a({ certificate_hash: D7.address })),
      `lease_accept certificate_hash mismatch: lease uses ${short(CERT.hash)}, accept uses ${short(D7.address)}`,
    );
    expectReject(
      () => c.submit(a({ locked_r: 0n })),
      'lease_accept missing locked emission params: locked_r must be set (the accept must carry locked_r/locked_payout_cap/locked_twap)',
    );
    expectReject(
      () => c.submit(a({ locked_r: 1999n })),
      'lease_accept locked emission mismatch: block (R=1999 cap=0 twap=0) != epoch@accept (R=2000 cap=0 twap=0)',
    );
    // The state chain tip (timestamp 0) is older than the block: on sync the mismatch is retryable.
    expectReject(
      () => t.ledger.submit(a({ locked_r: 1999n }), 'sync'),
      'lease_accept locked emission mismatch on sync: block (R=1999 cap=0 twap=0) != epoch@accept (R=2000 cap=0 twap=0): retry after statechain syncs',
      true,
      'sync',
    );
    expectReject(
      () => t.ledger.submit(a({ amount: 1n, balance: c.balance(D1, 'XUSD') - 1n }), 'sync'),
      `lease_accept stake mismatch on sync: expected ${stake}, got 1: retry after statechain syncs`,
      true,
      'sync',
    );
    // The sync path skips the attestation skew check.
    expect(t.ledger.submit(skewed, 'sync').status).toBe('applied');
    expectReject(() => c.submit(a({})), 'lease already accepted');
    // Cancelled leases cannot be accepted.
    const l2 = openLease();
    c.submit(c.next('lease_cancel', D6, { asset: 'XUSD', source: l2.hash, balance: c.balance(D6, 'XUSD') + COST_60 }));
    expectReject(() => c.submit(acceptBlock(l2)), 'cannot accept lease in cancelled state');
    // Stake larger than the provider's XUSD.
    const l3 = openLease();
    c.send(D1, D7, c.balance(D1, 'XUSD') - 1n, 'XUSD');
    expectReject(() => c.submit(acceptBlock(l3, { balance: 0n })), `insufficient XUSD balance for stake: have 1, need ${stake}`);
  });

  it('lease_renew: the certificate must not have expired at the renew time', () => {
    t.clock.ns = CERT.expires_at - 30n * SECOND;
    const lease = openLease(120n);
    t.clock.ns += SECOND;
    c.submit(acceptBlock(lease));
    t.clock.ns = CERT.expires_at + SECOND;
    expectReject(
      () => c.submit(renewBlock(lease, 60n)),
      `certificate ${short(CERT.hash)} expired: expires_at ${CERT.expires_at}, renew time ${t.clock.ns}`,
    );
  });

  it('lease_accept: the certificate must not have expired at the start time', () => {
    t.clock.ns = CERT.expires_at - SECOND;
    const lease = openLease();
    t.clock.ns = CERT.expires_at + SECOND;
    expectReject(
      () => c.submit(acceptBlock(lease)),
      `certificate ${short(CERT.hash)} expired: expires_at ${CERT.expires_at}, start_time ${t.clock.ns}`,
    );
  });

  it('lease_settle: every rule in order', () => {
    const { lease, expiry } = accepted();
    const xe = emission(COST_60, 2000n, 0n, 0n);
    t.clock.ns = expiry + SECOND;
    const s = (f: Partial<Block>) => settleBlock(lease, xe, f);
    expectReject(() => c.submit(s({ asset: 'XUSD', balance: c.balance(D1, 'XUSD') + xe })), 'lease_settle must have asset=XE');
    expectReject(() => c.submit(s({ source: '' })), 'lease_settle must reference a lease (source)');
    expectReject(() => c.submit(s({ source: D7.address })), `lease not found: ${short(D7.address)}`, true);
    c.fund(D7, 1000n, 0n);
    const byD7 = c.next('lease_settle', D7, { ...s({}), account: D7.address, previous: c.frontier(D7), balance: 1000n + xe }, 7);
    expectReject(() => c.submit(byD7), 'lease_settle: provider account mismatch');
    const l2 = openLease();
    expectReject(
      () => c.submit(settleBlock(l2, xe)),
      'lease not yet accepted for settle (state created): retry after accept',
      true,
    );
    c.submit(c.next('lease_cancel', D6, { asset: 'XUSD', source: l2.hash, balance: c.balance(D6, 'XUSD') + COST_60 }));
    expectReject(() => c.submit(settleBlock(l2, xe)), 'lease_settle: lease not settleable in cancelled state');
    expectReject(() => c.submit(s({ attestations: [] })), 'lease_settle attestation: need 1 attestations, got 0');
    t.clock.ns = expiry - SECOND;
    expectReject(() => c.submit(settleBlock(lease, xe)), `lease not yet expired: need timestamp >= ${expiry}, got ${t.clock.ns}`);
    t.clock.ns = expiry + GRACE + 1n;
    expectReject(
      () => c.submit(settleBlock(lease, xe)),
      `lease settle past grace: timestamp ${t.clock.ns} exceeds expiry+grace ${expiry + GRACE}`,
    );
    t.clock.ns = expiry + GRACE;
    expectReject(
      () => c.submit(settleBlock(lease, xe + 1n)),
      `lease_settle XE mismatch: expected ${xe} (cost=${COST_60}, R=2000, R_capped=2000), got ${xe + 1n}`,
    );
    expectReject(() => c.submit(settleBlock(lease, xe, { balance: 1n })), `lease_settle balance mismatch: expected ${c.balance(D1, 'XE') + xe}, got 1`);
    c.submit(settleBlock(lease, xe));
    expectReject(() => c.submit(settleBlock(lease, xe)), 'lease already settled');
  });

  it('lease_cancel: every rule in order', () => {
    const lease = openLease();
    const send = c.send(D6, D7, 5n);
    const x = (f: Partial<Block>) => c.next('lease_cancel', D6, { asset: 'XUSD', source: lease.hash, balance: c.balance(D6, 'XUSD') + COST_60, ...f });
    expectReject(() => c.submit(x({ asset: 'XE' })), 'lease_cancel must have asset=XUSD');
    expectReject(() => c.submit(x({ source: '' })), 'lease_cancel must reference a lease (source)');
    expectReject(() => c.submit(x({ source: D7.address })), `source lease block not found: ${short(D7.address)}`, true);
    expectReject(() => c.submit(x({ source: send.hash })), `lease_cancel source ${short(send.hash)} is not a lease block`);
    const byD1 = c.next('lease_cancel', D1, { asset: 'XUSD', source: lease.hash, balance: c.balance(D1, 'XUSD') + COST_60 });
    expectReject(() => c.submit(byD1), 'lease_cancel: only the consumer can cancel a lease');
    expectReject(() => c.submit(x({ balance: 1n })), `lease_cancel balance mismatch: expected ${c.balance(D6, 'XUSD') + COST_60}, got 1`);
    t.clock.ns += SECOND;
    c.submit(acceptBlock(lease));
    expectReject(() => c.submit(x({})), 'cannot cancel lease in accepted state');
  });

  it('lease_force_settle: every rule in order', () => {
    const { lease, expiry } = accepted();
    const opens = expiry + GRACE + GAP;
    t.clock.ns = opens + 1n;
    const f = (x: Partial<Block>) => forceBlock(lease, COST_60, x);
    expectReject(() => c.submit(f({ asset: 'XE', balance: c.balance(D6, 'XE') })), 'lease_force_settle must have asset=XUSD');
    expectReject(() => c.submit(f({ source: '' })), 'lease_force_settle must reference a lease (source)');
    expectReject(() => c.submit(f({ source: D7.address })), `lease not found: ${short(D7.address)}`, true);
    const send = c.send(D6, D7, 5n);
    expectReject(() => c.submit(f({ source: send.hash })), `lease_force_settle source ${short(send.hash)} is not a lease block`);
    const byD1 = c.next('lease_force_settle', D1, { ...f({}), account: D1.address, previous: c.frontier(D1), balance: c.balance(D1, 'XUSD') + COST_60 });
    expectReject(() => c.submit(byD1), 'lease_force_settle: only the consumer can force-settle a lease');
    const l2 = openLease();
    expectReject(
      () => c.submit(forceBlock(l2, COST_60)),
      'lease not yet accepted for force-settle (state created): retry after accept',
      true,
    );
    c.submit(c.next('lease_cancel', D6, { asset: 'XUSD', source: l2.hash, balance: c.balance(D6, 'XUSD') + COST_60 }));
    expectReject(() => c.submit(forceBlock(l2, COST_60)), 'cannot force-settle lease in cancelled state');
    t.clock.ns = opens;
    expectReject(() => c.submit(forceBlock(lease, COST_60)), `lease not yet force-settleable: need timestamp > ${opens}, got ${opens}`);
    t.clock.ns = expiry + ESCROW_EXPIRY;
    expectReject(
      () => c.submit(forceBlock(lease, COST_60)),
      `lease escrow expired: refund window closed at ${expiry + ESCROW_EXPIRY}, got ${t.clock.ns}`,
    );
    t.clock.ns = opens + 1n;
    expectReject(() => c.submit(f({ balance: 2n })), `lease_force_settle balance mismatch: expected ${c.balance(D6, 'XUSD') + COST_60}, got 2`);
    c.submit(f({}));
    expectReject(() => c.submit(forceBlock(lease, COST_60)), 'lease already settled');
  });

  it('lease_renew: every rule in order', () => {
    const { lease, expiry } = accepted();
    t.clock.ns = expiry - 30n * SECOND;
    const send = c.send(D6, D7, 5n);
    const r = (x: Partial<Block>, d = 60n) => renewBlock(lease, d, x);
    expectReject(() => c.submit(r({ asset: 'XE', balance: c.balance(D6, 'XE') })), 'lease_renew must have asset=XUSD');
    expectReject(() => c.submit(r({ source: '' })), 'lease_renew must reference a lease (source)');
    expectReject(() => c.submit(r({ source: D7.address })), `source lease block not found: ${short(D7.address)}`, true);
    expectReject(() => c.submit(r({ source: send.hash })), `lease_renew source ${short(send.hash)} is not a lease block`);
    const byD1 = c.next('lease_renew', D1, { ...r({}), account: D1.address, previous: c.frontier(D1), balance: c.balance(D1, 'XUSD') - COST_60 });
    expectReject(() => c.submit(byD1), 'lease_renew: only the consumer can renew a lease');
    const l2 = openLease();
    expectReject(() => c.submit(renewBlock(l2, 60n)), 'lease not yet accepted for renew (state created): retry after accept', true);
    expectReject(() => c.submit(r({ duration: 4n }, 4n)), 'lease_renew duration must be >= 5 seconds');
    expectReject(() => c.submit(r({ duration: 31_536_001n, amount: 1n })), 'lease_renew duration must be <= 31536000 seconds');
    expectReject(() => c.submit(r({ certificate_hash: '' })), 'lease_renew must include certificate_hash');
    expectReject(() => c.submit(r({ certificate_hash: D7.address })), `certificate ${short(D7.address)} not found`, true);
    const other = makeCertificate(D7, T0 - 100n * SECOND);
    t.ledger.certificates.add(other, { admitUnopened: true });
    expectReject(
      () => c.submit(r({ certificate_hash: other.hash })),
      `certificate ${short(other.hash)} belongs to ${short(D7.address)}, not lease provider ${short(D1.address)}`,
    );
    expectReject(() => c.submit(r({ amount: 5n, balance: c.balance(D6, 'XUSD') - 5n })), `lease_renew cost mismatch: expected ${COST_60} (multiplier 1000), got 5`);
    expectReject(() => c.submit(r({ balance: 5n })), `lease_renew balance mismatch: expected ${c.balance(D6, 'XUSD') - COST_60}, got 5`);
    expectReject(() => c.submit(r({ attestations: [] })), 'lease_renew attestation: need 1 attestations, got 0');
    expectReject(() => c.submit(r({ locked_r: 0n })), 'lease_renew missing locked emission params: locked_r must be set');
    expectReject(
      () => c.submit(r({ locked_r: 7n })),
      'lease_renew locked emission mismatch: block (R=7 cap=0 twap=0) != epoch@renew (R=2000 cap=0 twap=0)',
    );
    const newer = makeCertificate(D1, t.clock.ns - 5n * SECOND);
    t.ledger.certificates.add(newer);
    expectReject(
      () => c.submit(r({})),
      `certificate ${short(CERT.hash)} superseded by ${short(newer.hash)} at renew time ${t.clock.ns}`,
    );
    const future = makeCertificate(D1, t.clock.ns + 100n * SECOND);
    t.ledger.certificates.add(future);
    expectReject(
      () => c.submit(r({ certificate_hash: future.hash })),
      `certificate ${short(future.hash)} not yet valid: issued_at ${future.issued_at}, renew time ${t.clock.ns}`,
    );
    t.clock.ns = expiry;
    expectReject(() => c.submit(r({ certificate_hash: newer.hash })), `lease_renew: lease expired at ${expiry}, renewal attested at ${expiry}`);
    t.clock.ns = expiry - SECOND;
    c.submit(r({ certificate_hash: newer.hash }));
    // A settled lease cannot be renewed; a cancelled one is in the wrong state.
    t.clock.ns = expiry + 61n * SECOND;
    const xe = emission(COST_60, 2000n, 0n, 0n) * 2n;
    c.submit(settleBlock(lease, xe));
    expectReject(() => c.submit(renewBlock(lease, 60n, { certificate_hash: newer.hash })), 'lease already settled');
    c.submit(c.next('lease_cancel', D6, { asset: 'XUSD', source: l2.hash, balance: c.balance(D6, 'XUSD') + COST_60 }));
    expectReject(() => c.submit(renewBlock(l2, 60n, { certificate_hash: newer.hash })), 'cannot renew lease in cancelled state');
  });
});

describe('lease rules that read governance as of the block', () => {
  it('attested blocks need sys.timekeepers', () => {
    setup(statechainGenesisVariant({ 'sys.timekeepers': null }));
    const lease = openLease();
    t.clock.ns += SECOND;
    expectReject(() => c.submit(acceptBlock(lease)), 'lease_accept: timekeepers not configured');
    expectReject(
      () => t.ledger.submit(acceptBlock(lease), 'sync'),
      'lease_accept: timekeepers not configured: retry after statechain syncs',
      true,
      'sync',
    );
  });

  it('an accept needs an epoch at its start time', () => {
    setup(statechainGenesisVariant({ 'epoch.0': null }));
    const lease = openLease();
    t.clock.ns += SECOND;
    expectReject(
      () => c.submit(acceptBlock(lease)),
      `lease_accept epoch not yet available for accept time ${t.clock.ns}: retry after statechain syncs`,
      true,
    );
  });

  it('the stake divisor comes from sys.tokenomics', () => {
    const tok = '{"r_init":2000,"r_floor":100,"v_half":500000000,"price_tier_1":500,"price_tier_2":1010,"price_tier_3":10000,"r_price_floor_tier_1":2000,"r_price_floor_tier_2":1250,"r_collusion_factor_milli":950,"hermite_fdv_min_usd":5000000,"hermite_fdv_max_usd":1000000000,"hermite_ceiling_milli":1550,"hermite_floor_milli":1120,"stake_divisor":2}';
    setup(statechainGenesisVariant({ 'sys.tokenomics': tok }));
    const lease = openLease();
    t.clock.ns += SECOND;
    const stake = leaseStake(COST_60, 2n);
    expectReject(() => c.submit(acceptBlock(lease)), `lease_accept stake mismatch: expected ${stake}, got ${leaseStake(COST_60, 5n)}`);
    c.submit(acceptBlock(lease, { amount: stake, balance: c.balance(D1, 'XUSD') - stake }));
    expect(t.ledger.lease(lease.hash)!.stake).toBe(stake);
  });
});
