// A table of leases behind provisioning's LeaseView port — the ledger's lease records reduced to what
// the reconciler reads. Tests move leases between states by hand.

import type { LeaseFacts, LeaseView, ReportedLeaseState } from '../../../provisioning/lease-view.js';

export class LeaseBook implements LeaseView {
  private readonly leases = new Map<string, LeaseFacts>();

  put(lease: LeaseFacts): LeaseFacts {
    this.leases.set(lease.leaseHash, lease);
    return lease;
  }

  setState(leaseHash: string, state: ReportedLeaseState): void {
    this.leases.set(leaseHash, { ...this.leases.get(leaseHash)!, state });
  }

  get(leaseHash: string): LeaseFacts | null {
    return this.leases.get(leaseHash) ?? null;
  }

  listProvided(): LeaseFacts[] {
    return [...this.leases.values()];
  }
}

/** Serializable form for a child process (bigints as decimal strings). */
export function leaseToJson(l: LeaseFacts): Record<string, unknown> {
  return { ...l, expiresAt: String(l.expiresAt), settleGraceNs: String(l.settleGraceNs) };
}

export function leaseFromJson(o: Record<string, unknown>): LeaseFacts {
  return { ...(o as unknown as LeaseFacts), expiresAt: BigInt(o.expiresAt as string), settleGraceNs: BigInt(o.settleGraceNs as string) };
}
