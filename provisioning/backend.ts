// The contract every VM backend fulfils (provider.md §5.1). The reconciler is the only caller;
// it persists VM records and decides what should exist, a backend only makes it so.

export interface VmSpec {
  /** Full 64-hex lease hash; the machine is named `netvm-<first 12 hex>` and labelled with it. */
  leaseHash: string;
  vcpus: number;
  memoryMb: number;
  diskGb: number;
  /** The lease's access key, 64 lowercase hex (ed25519, 32 raw bytes). */
  accessPubKey: string;
  /** The provider gateway's own ed25519 public key line (`ssh-ed25519 AAAA…`), installed for root. */
  gatewayAuthorizedKey: string;
  /** The generated user (provider.md §5.1): `net-` + 8 hex, and its 24-character password. */
  username: string;
  password: string;
}

/** Where the provider host reaches the guest's SSH server. */
export interface SshEndpoint {
  host: string;
  port: number;
}

export interface VmHandle {
  /** Backend-specific identifier (container id, domain name). */
  backendId: string;
  ssh: SshEndpoint;
}

export interface ObservedVm {
  leaseHash: string;
  backendId: string;
  running: boolean;
  ssh: SshEndpoint | null;
}

export interface VmBackend {
  /** `docker` or `libvirt`. */
  readonly name: string;
  /** Create and start the machine; resolves once the guest's sshd accepts TCP connections. */
  create(spec: VmSpec, signal?: AbortSignal): Promise<VmHandle>;
  /** Remove the machine and everything created for it (overlays, seeds, networks). Idempotent. */
  destroy(leaseHash: string): Promise<void>;
  /** Machines this backend manages (by name/label), for adoption after a restart. */
  list(): Promise<ObservedVm[]>;
  /** Check that the backend is usable (engine reachable, image present); throws a readable error. */
  check(): Promise<void>;
  /** Release what the backend prepared ahead of time (never a tenant machine), at shutdown. */
  close?(): Promise<void>;
}

export function vmName(leaseHash: string): string {
  return `netvm-${leaseHash.slice(0, 12)}`;
}
