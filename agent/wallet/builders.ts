// Blocks an account owner writes, built from what the node reports about the account. Pure
// functions: the caller hashes, signs and solves PoW (ledger/crypto/block-signer.ts).
import type { Attestation, Block, Lease, PendingEntry } from '../../ledger/types.js';
import { emptyBlock } from '../../ledger/types.js';

/** What a block builder needs to know about its own account. */
export interface AccountState {
  address: string;
  publicKey: string;
  /** Hash of the newest block, or null when the account has no chain yet. */
  frontier: string | null;
  /** Running balances (ledger.md §17.1) by asset. */
  balances: Record<string, bigint>;
}

function base(st: AccountState, type: Block['type'], asset: string, timestamp: bigint): Block {
  return {
    ...emptyBlock(type),
    account: st.address,
    previous: st.frontier ?? '0',
    asset,
    timestamp,
    // The key is declared exactly on a single-key account's opening block (ledger.md §7.2).
    pub_key: st.frontier === null ? st.publicKey : '',
  };
}

function requireChain(st: AccountState, what: string): void {
  if (st.frontier === null) throw new Error(`${what}: account ${st.address} is not open yet (it needs a receive or mint first)`);
}

function balanceOf(st: AccountState, asset: string): bigint {
  return st.balances[asset] ?? 0n;
}

export function buildSend(st: AccountState, p: { to: string; amount: bigint; asset: string; memo?: string }, timestamp: bigint): Block {
  requireChain(st, 'send');
  const have = balanceOf(st, p.asset);
  if (p.amount > have) throw new Error(`insufficient ${p.asset}: have ${have}, sending ${p.amount}`);
  return { ...base(st, 'send', p.asset, timestamp), destination: p.to, amount: p.amount, memo: p.memo ?? '', balance: have - p.amount };
}

export function buildReceive(st: AccountState, pending: PendingEntry, timestamp: bigint): Block {
  const asset = pending.asset || 'XE';
  return { ...base(st, 'receive', asset, timestamp), source: pending.send_hash, balance: balanceOf(st, asset) + pending.amount };
}

export function buildMint(st: AccountState, amount: bigint, timestamp: bigint): Block {
  return { ...base(st, 'mint', 'XUSD', timestamp), amount, balance: balanceOf(st, 'XUSD') + amount };
}

export function buildBurn(st: AccountState, amount: bigint, timestamp: bigint, memo = ''): Block {
  requireChain(st, 'burn');
  const have = balanceOf(st, 'XE');
  if (amount > have) throw new Error(`insufficient XE: have ${have}, burning ${amount}`);
  return { ...base(st, 'burn', 'XE', timestamp), amount, memo, balance: have - amount };
}

export interface LeaseOrder {
  provider: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  accessPubKey: string;
  certificateHash: string;
  cost: bigint;
}

export function buildLease(st: AccountState, o: LeaseOrder, timestamp: bigint): Block {
  requireChain(st, 'lease');
  const have = balanceOf(st, 'XUSD');
  if (o.cost > have) throw new Error(`insufficient XUSD: have ${have}, need ${o.cost}`);
  return {
    ...base(st, 'lease', 'XUSD', timestamp),
    destination: o.provider,
    amount: o.cost,
    vcpus: o.vcpus,
    memory_mb: o.memory_mb,
    disk_gb: o.disk_gb,
    duration: o.duration,
    access_pub_key: o.accessPubKey,
    certificate_hash: o.certificateHash,
    balance: have - o.cost,
  };
}

export function buildLeaseCancel(st: AccountState, lease: Lease, timestamp: bigint): Block {
  requireChain(st, 'lease_cancel');
  return { ...base(st, 'lease_cancel', 'XUSD', timestamp), source: lease.lease_hash, balance: balanceOf(st, 'XUSD') + lease.cost };
}

/** Escrow a force-settle refunds: the cost plus every renewal cost (leases.md §8.4). */
export function leaseEscrow(lease: Lease): bigint {
  return lease.renewals.reduce((sum, r) => sum + r.cost, lease.cost);
}

export function buildForceSettle(st: AccountState, lease: Lease, attestations: Attestation[], timestamp: bigint): Block {
  requireChain(st, 'lease_force_settle');
  return {
    ...base(st, 'lease_force_settle', 'XUSD', timestamp),
    source: lease.lease_hash,
    attestations,
    balance: balanceOf(st, 'XUSD') + leaseEscrow(lease),
  };
}

/** Unix nanoseconds now. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
