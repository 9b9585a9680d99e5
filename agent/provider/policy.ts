// The provider's accept policy (provider.md §4 gates 2–5): which `created` leases addressed to this
// node it is willing to serve. Pure decisions over the lease, the operator's settings, and what the
// node is already running; the provider loop acts on the verdict.
import type { Lease } from '../../ledger/types.js';
import { MIN_DISK_GB, MIN_MEMORY_MB, MIN_VCPUS } from '../../provisioning/floors.js';

export interface Capacity {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
}

export interface AcceptPolicy {
  /** Total capacity the provider offers (`--vcpus`, `--memory`, `--disk`). */
  capacity: Capacity;
  /** Lease `duration` bounds in seconds (0 = no bound). */
  minDurationSecs: bigint;
  maxDurationSecs: bigint;
  /** Lease cost bounds in micro-XUSD (0 = no bound). */
  minCost: bigint;
  maxCost: bigint;
  /** Running plus in-flight VMs allowed at once (0 = capacity-bound only). */
  maxConcurrentLeases: number;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/** Resources of the leases this provider is running or provisioning right now. */
export interface Commitments {
  count: number;
  used: Capacity;
}

export function judgeLease(lease: Lease, policy: AcceptPolicy, committed: Commitments): Verdict {
  if (lease.access_pub_key === '') return refuse('lease has no access key: its VM could never be reached');
  const d = lease.duration;
  if (policy.minDurationSecs > 0n && d < policy.minDurationSecs) return refuse(`duration ${d}s below the minimum ${policy.minDurationSecs}s`);
  if (policy.maxDurationSecs > 0n && d > policy.maxDurationSecs) return refuse(`duration ${d}s above the maximum ${policy.maxDurationSecs}s`);
  if (policy.minCost > 0n && lease.cost < policy.minCost) return refuse(`cost ${lease.cost} below the minimum ${policy.minCost}`);
  if (policy.maxCost > 0n && lease.cost > policy.maxCost) return refuse(`cost ${lease.cost} above the maximum ${policy.maxCost}`);
  if (policy.maxConcurrentLeases > 0 && committed.count >= policy.maxConcurrentLeases) {
    return refuse(`already serving ${committed.count} leases (max ${policy.maxConcurrentLeases})`);
  }
  const want = floors(lease);
  const cap = policy.capacity;
  for (const k of ['vcpus', 'memory_mb', 'disk_gb'] as const) {
    if (committed.used[k] + want[k] > cap[k]) {
      return refuse(`not enough ${k}: ${committed.used[k]} of ${cap[k]} committed, lease needs ${want[k]}`);
    }
  }
  return { ok: true };
}

/** What a lease occupies on the host: its request raised to the VM floors of provider.md §5.1. */
export function floors(lease: Pick<Lease, 'vcpus' | 'memory_mb' | 'disk_gb'>): Capacity {
  const max = (a: bigint, b: number): bigint => (a > BigInt(b) ? a : BigInt(b));
  return { vcpus: max(lease.vcpus, MIN_VCPUS), memory_mb: max(lease.memory_mb, MIN_MEMORY_MB), disk_gb: max(lease.disk_gb, MIN_DISK_GB) };
}

function refuse(reason: string): Verdict {
  return { ok: false, reason };
}
