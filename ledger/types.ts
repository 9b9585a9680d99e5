// Domain types of the ledger. Every 64-bit quantity is a bigint (u64 amounts, i64 ns timestamps),
// so nothing is ever rounded through a double. Hex values are lowercase strings.

export const BLOCK_TYPES = [
  'send',
  'receive',
  'lease',
  'lease_accept',
  'lease_settle',
  'genesis',
  'multisig_open',
  'multisig_update',
  'lease_cancel',
  'burn',
  'lease_force_settle',
  'mint',
  'lease_renew',
] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

/** Consensus type bytes (ledger.md §1). 0x03 is unassigned. */
export const TYPE_BYTE: Readonly<Record<BlockType, number>> = {
  send: 0x01,
  receive: 0x02,
  lease: 0x04,
  lease_accept: 0x05,
  lease_settle: 0x06,
  genesis: 0x07,
  multisig_open: 0x08,
  multisig_update: 0x09,
  lease_cancel: 0x0a,
  burn: 0x0b,
  lease_force_settle: 0x0c,
  mint: 0x0d,
  lease_renew: 0x0e,
};

/** Block types a client may submit over HTTP (everything but genesis). */
export const SUBMITTABLE_TYPES: readonly BlockType[] = BLOCK_TYPES.filter((t) => t !== 'genesis');

export function isBlockType(s: unknown): s is BlockType {
  return typeof s === 'string' && (BLOCK_TYPES as readonly string[]).includes(s);
}

export type Asset = 'XE' | 'XUSD';
export const ASSETS: readonly Asset[] = ['XE', 'XUSD'];

export interface Attestation {
  public_key: string;
  timestamp: bigint;
  signature: string;
}

export interface Keyset {
  keys: string[];
  threshold: number;
}

export interface SignatureEntry {
  public_key: string;
  signature: string;
}

/** Lease timing carried by a genesis block (leases.md §4). */
export interface LeaseTiming {
  lease_min_duration_secs: bigint;
  lease_settle_grace_ns: bigint;
  lease_force_settle_gap_ns: bigint;
  lease_escrow_expiry_ns: bigint;
  lease_archive_gap_ns: bigint;
  max_attestation_skew_ns: bigint;
}

export const LEASE_TIMING_FIELDS: readonly (keyof LeaseTiming)[] = [
  'lease_min_duration_secs',
  'lease_settle_grace_ns',
  'lease_force_settle_gap_ns',
  'lease_escrow_expiry_ns',
  'lease_archive_gap_ns',
  'max_attestation_skew_ns',
];

/**
 * One record shape for every block type (ledger.md §3). Fields that do not apply to a type hold
 * their zero value; `signatures` is null for a single-key block and an array for a multisig one.
 */
export interface Block extends LeaseTiming {
  type: BlockType;
  account: string;
  previous: string;
  balance: bigint;
  timestamp: bigint;
  asset: string;
  representative: string;
  destination: string;
  amount: bigint;
  source: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  access_pub_key: string;
  memo: string;
  keyset: Keyset | null;
  signatures: SignatureEntry[] | null;
  pub_key: string;
  signature: string;
  hash: string;
  pow_nonce: bigint;
  attestations: Attestation[];
  certificate_hash: string;
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

/** A block with every field at its zero value; spread over it to build one. */
export function emptyBlock(type: BlockType): Block {
  return {
    type,
    account: '',
    previous: '',
    balance: 0n,
    timestamp: 0n,
    asset: '',
    representative: '',
    destination: '',
    amount: 0n,
    source: '',
    vcpus: 0n,
    memory_mb: 0n,
    disk_gb: 0n,
    duration: 0n,
    access_pub_key: '',
    memo: '',
    keyset: null,
    signatures: null,
    pub_key: '',
    signature: '',
    hash: '',
    pow_nonce: 0n,
    attestations: [],
    certificate_hash: '',
    locked_r: 0n,
    locked_payout_cap: 0n,
    locked_twap_milli: 0n,
    lease_min_duration_secs: 0n,
    lease_settle_grace_ns: 0n,
    lease_force_settle_gap_ns: 0n,
    lease_escrow_expiry_ns: 0n,
    lease_archive_gap_ns: 0n,
    max_attestation_skew_ns: 0n,
  };
}

export const LEASE_STATES = ['created', 'accepted', 'settled', 'cancelled', 'unfulfilled', 'expired'] as const;
export type LeaseState = (typeof LEASE_STATES)[number];
/** States a lease record is stored in; `expired` is only ever derived at read time. */
export type StoredLeaseState = Exclude<LeaseState, 'expired'>;

export interface Renewal {
  renew_hash: string;
  duration: bigint;
  cost: bigint;
  start_time: bigint;
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

/** Lease record (leases.md §3.1), `state` as reported at read time. */
export interface Lease {
  lease_hash: string;
  state: LeaseState;
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
  settled: boolean;
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
  renewals: Renewal[];
  effective_duration: bigint;
  expires_at: bigint;
}

/** Pending entry (ledger.md §13). */
export interface PendingEntry {
  send_hash: string;
  source: string;
  destination: string;
  amount: bigint;
  asset: string;
  timestamp: bigint;
}

/** Performance certificate (leases.md §9.1). */
export interface Certificate {
  provider: string;
  provider_pub_key: string;
  seed: string;
  workload_version: bigint;
  iterations: bigint;
  work_proof: string;
  score: number;
  start_attestation_root: string;
  end_attestation_root: string;
  start_median: bigint;
  end_median: bigint;
  issued_at: bigint;
  expires_at: bigint;
  price_multiplier_milli: bigint;
  signature: string;
  hash: string;
}

/** Which intake path a block arrived by (live = API and gossip; sync = peer sync). */
export type IntakePath = 'live' | 'sync';
