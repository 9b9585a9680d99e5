import { describe, expect, it } from 'vitest';
import { floors, judgeLease, type AcceptPolicy } from '../../agent/provider/policy.js';
import { leaseEmission } from '../../agent/provider/provider-loop.js';
import type { Lease } from '../../ledger/types.js';

const lease = (over: Partial<Lease> = {}): Lease => ({
  lease_hash: 'aa'.repeat(32),
  state: 'created',
  consumer: 'bb'.repeat(32),
  provider: 'cc'.repeat(32),
  vcpus: 1n,
  memory_mb: 1024n,
  disk_gb: 10n,
  duration: 300n,
  access_pub_key: 'dd'.repeat(32),
  cost: 3334n,
  stake: 0n,
  start_time: 0n,
  certificate_hash: 'ee'.repeat(32),
  settled: false,
  locked_r: 0n,
  locked_payout_cap: 0n,
  locked_twap_milli: 0n,
  renewals: [],
  effective_duration: 300n,
  expires_at: 0n,
  ...over,
});

const policy: AcceptPolicy = {
  capacity: { vcpus: 2n, memory_mb: 2048n, disk_gb: 20n },
  minDurationSecs: 0n,
  maxDurationSecs: 0n,
  minCost: 0n,
  maxCost: 0n,
  maxConcurrentLeases: 0,
};
const idle = { count: 0, used: { vcpus: 0n, memory_mb: 0n, disk_gb: 0n } };

describe('accept policy', () => {
  it('accepts a lease that fits', () => {
    expect(judgeLease(lease(), policy, idle)).toEqual({ ok: true });
  });
  it('refuses a lease without an access key', () => {
    expect(judgeLease(lease({ access_pub_key: '' }), policy, idle)).toMatchObject({ ok: false, reason: expect.stringMatching(/no access key/) });
  });
  it('applies duration and cost bounds', () => {
    expect(judgeLease(lease({ duration: 30n }), { ...policy, minDurationSecs: 60n }, idle).ok).toBe(false);
    expect(judgeLease(lease({ duration: 7200n }), { ...policy, maxDurationSecs: 3600n }, idle).ok).toBe(false);
    expect(judgeLease(lease({ cost: 10n }), { ...policy, minCost: 100n }, idle).ok).toBe(false);
    expect(judgeLease(lease({ cost: 1000n }), { ...policy, maxCost: 100n }, idle).ok).toBe(false);
  });
  it('counts running and in-flight VMs against capacity and the concurrency cap', () => {
    const busy = { count: 1, used: { vcpus: 2n, memory_mb: 1024n, disk_gb: 10n } };
    expect(judgeLease(lease(), policy, busy)).toMatchObject({ ok: false, reason: expect.stringMatching(/not enough vcpus/) });
    expect(judgeLease(lease(), { ...policy, maxConcurrentLeases: 1 }, { ...idle, count: 1 }).ok).toBe(false);
  });
  it('reserves at least the VM floors', () => {
    expect(floors({ vcpus: 0n, memory_mb: 100n, disk_gb: 1n })).toEqual({ vcpus: 1n, memory_mb: 512n, disk_gb: 5n });
  });
});

describe('settle emission', () => {
  it('sums the base segment and each renewal (the vector scenario: 8,002)', () => {
    const l = lease({ cost: 3334n, locked_r: 2000n });
    l.renewals = [{ renew_hash: 'ff'.repeat(32), duration: 60n, cost: 667n, start_time: 0n, locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n }];
    expect(leaseEmission(l)).toBe(8002n);
  });
});
