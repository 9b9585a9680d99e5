// In-memory records of ledger state: accounts and stored leases, and how a stored lease is
// reported (leases.md §3: `expired` is derived at read time, never stored).
import type { Keyset, Lease, LeaseState, LeaseTiming, Renewal, StoredLeaseState } from '../types.js';

export const NS_PER_SECOND = 1_000_000_000n;

export interface AccountState {
  address: string;
  /** Hash of the newest block. */
  frontier: string;
  /** Number of blocks on the chain (the frontier's 1-based height). */
  height: number;
  lastTimestamp: bigint;
  /** Declared key of a single-key account ('' for multisig). */
  pubKey: string;
  keyset: Keyset | null;
  /** Current delegation target ('' = never delegated). */
  representative: string;
  /** Finality watermark: blocks at 1-based height ≤ this are finalized. */
  finalHeight: number;
  /** Running balances per asset (ledger.md §17.1, returned stakes included). */
  balances: Map<string, bigint>;
}

/** A lease as stored: the reported record's fields plus node bookkeeping. */
export interface StoredLease {
  lease_hash: string;
  state: StoredLeaseState;
  consumer: string;
  provider: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  access_pub_key: string;
  cost: bigint;
  stake: bigint;
  start_time: bigint;
  certificate_hash: string;
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
  renewals: Renewal[];
  /** Timestamp of the lease block. */
  created_at: bigint;
  /** Timestamp of the block that ended it (settle, cancel, force-settle), 0 while live. */
  ended_at: bigint;
  /** XE emitted by its settle (0 unless settled). */
  emission: bigint;
}

export function effectiveDuration(l: StoredLease): bigint {
  return l.renewals.reduce((sum, r) => sum + r.duration, l.duration);
}

/** `start_time + effective_duration·10⁹` (meaningful once accepted). */
export function leaseExpiry(l: StoredLease): bigint {
  return l.start_time + effectiveDuration(l) * NS_PER_SECOND;
}

/** Escrow the consumer paid: cost plus every renewal cost. */
export function leaseEscrow(l: StoredLease): bigint {
  return l.renewals.reduce((sum, r) => sum + r.cost, l.cost);
}

export function reportedState(l: StoredLease, now: bigint, timing: LeaseTiming): LeaseState {
  if (l.state === 'accepted' && now >= leaseExpiry(l) + timing.lease_escrow_expiry_ns) return 'expired';
  return l.state;
}

export function reportLease(l: StoredLease, now: bigint, timing: LeaseTiming): Lease {
  const accepted = l.state === 'accepted' || l.state === 'settled' || l.state === 'unfulfilled';
  return {
    lease_hash: l.lease_hash,
    state: reportedState(l, now, timing),
    consumer: l.consumer,
    provider: l.provider,
    vcpus: l.vcpus,
    memory_mb: l.memory_mb,
    disk_gb: l.disk_gb,
    duration: l.duration,
    access_pub_key: l.access_pub_key,
    cost: l.cost,
    stake: l.stake,
    start_time: l.start_time,
    certificate_hash: l.certificate_hash,
    settled: l.state === 'settled' || l.state === 'unfulfilled',
    locked_r: l.locked_r,
    locked_payout_cap: l.locked_payout_cap,
    locked_twap_milli: l.locked_twap_milli,
    renewals: l.renewals.map((r) => ({ ...r })),
    effective_duration: effectiveDuration(l),
    expires_at: accepted ? leaseExpiry(l) : 0n,
  };
}

export function cloneLease(l: StoredLease): StoredLease {
  return { ...l, renewals: l.renewals.map((r) => ({ ...r })) };
}

export function cloneAccount(a: AccountState): AccountState {
  return {
    ...a,
    keyset: a.keyset && { keys: [...a.keyset.keys], threshold: a.keyset.threshold },
    balances: new Map(a.balances),
  };
}
