// What provisioning needs to know about leases, and nothing more (ARCHITECTURE.md "Doors"). The
// composition root adapts the ledger to it; provisioning never reads ledger tables.

/** Lease states as reported (leases.md §3.2): `expired` is derived from stored `accepted` and time. */
export type ReportedLeaseState = 'created' | 'accepted' | 'settled' | 'cancelled' | 'unfulfilled' | 'expired';

export interface LeaseFacts {
  leaseHash: string;
  state: ReportedLeaseState;
  vcpus: number;
  memoryMb: number;
  diskGb: number;
  /** 64 lowercase hex, or `""` when the lease has none (it cannot be served). */
  accessPubKey: string;
  /** start_time + effective duration (ns); meaningful once accepted. */
  expiresAt: bigint;
  /** `lease_settle_grace_ns` in force for this lease. */
  settleGraceNs: bigint;
}

export interface LeaseView {
  /** The lease as this node currently reports it, or null when unknown. */
  get(leaseHash: string): LeaseFacts | null;
  /** Leases whose provider is this node, in any state. */
  listProvided(): LeaseFacts[];
}

/** Terminal as reported: nothing will ever make the VM useful again. */
export function isTerminal(state: ReportedLeaseState): boolean {
  return state === 'settled' || state === 'cancelled' || state === 'unfulfilled' || state === 'expired';
}

/** An accepted lease past expiry + settle grace: the provider stopped trying to settle (provider.md §10). */
export function isPastGrace(lease: LeaseFacts, nowNs: bigint): boolean {
  return lease.state === 'accepted' && nowNs > lease.expiresAt + lease.settleGraceNs;
}
