// What the SSH gateway and the TCP tunnel may know about leases and VMs (provider.md §6, §7). The
// composition root adapts the ledger, the reconciler and the `Network` port to these interfaces;
// nothing in gateway/ reaches past them.

import type { Duplex } from 'node:stream';

export interface LeaseAccessRecord {
  /** The state as reported now (`expired` included, leases.md §10). */
  state: string;
  /** Provider address (64 hex). */
  provider: string;
  /** 64 lowercase hex, or '' when the lease carries no access key. */
  accessPubKey: string;
}

export interface VmEndpoint {
  host: string;
  port: number;
}

export interface LeaseAccess {
  lease(leaseHash: string): LeaseAccessRecord | null;
  /** This node's account address: the provider of the leases it serves itself. */
  readonly localProvider: string;
  /** Where this host reaches the guest's SSH server; null when no VM runs for the lease. */
  vmEndpoint(leaseHash: string): Promise<VmEndpoint | null>;
}

/**
 * Opens `/net/tunnel/2.0.0` to another provider (provider.md §7.2). Rejections carry the message the
 * HTTP answer quotes after `tunnel error: ` (e.g. `provider peer not found`).
 */
export interface RemoteTunnelDialer {
  open(provider: string, leaseHash: string, accessSignature: Uint8Array): Promise<Duplex>;
}

/** Why a lease cannot be reached through this node's gateway (provider.md §6, §7.2 order). */
export type LeaseRefusal = 'lease not found' | 'lease not active' | 'not the provider for this lease' | 'lease has no access key';

/** The lease checks every local entry point runs before any byte reaches a VM. */
export function checkServedLease(access: LeaseAccess, leaseHash: string): LeaseRefusal | LeaseAccessRecord {
  const lease = access.lease(leaseHash);
  if (!lease) return 'lease not found';
  if (lease.state !== 'accepted') return 'lease not active';
  if (lease.provider !== access.localProvider) return 'not the provider for this lease';
  if (!lease.accessPubKey) return 'lease has no access key';
  return lease;
}

/** One hour without a byte in either direction closes a tunnel or a gateway channel (choice). */
export const IDLE_LIMIT_MS = 60 * 60 * 1000;
