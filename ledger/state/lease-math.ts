// Lease consensus arithmetic (leases.md §1.2, §2, §7): bigint throughout, every product and sum
// checked against the u64 range.
import { invalid } from '../errors.js';
import { U64_MAX, I64_MAX } from '../codec/bytes.js';

export const RATE_VCPU_PER_HOUR = 20_000n;
export const RATE_MEMORY_GIB_PER_HOUR = 10_000n;
export const RATE_DISK_GIB_PER_HOUR = 1_000n;

/** ⌈a/b⌉ as the protocol defines it: 0 when a = 0, else (a − 1) / b + 1. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new RangeError('ceilDiv by a non-positive divisor');
  return a === 0n ? 0n : (a - 1n) / b + 1n;
}

class U64Overflow extends Error {}

function checked(x: bigint): bigint {
  if (x < 0n || x > U64_MAX) throw new U64Overflow();
  return x;
}

export interface LeaseDimensions {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
}

/** Cost in µXUSD; throws LedgerError invalid `lease cost overflow` on any u64 overflow. */
export function leaseCost(d: LeaseDimensions, multiplierMilli: bigint): bigint {
  try {
    const minutes = ceilDiv(checked(d.duration), 60n);
    const memGib = ceilDiv(checked(d.memory_mb), 1024n);
    const perHour = checked(
      checked(checked(checked(d.vcpus) * RATE_VCPU_PER_HOUR) + checked(memGib * RATE_MEMORY_GIB_PER_HOUR)) +
        checked(checked(d.disk_gb) * RATE_DISK_GIB_PER_HOUR),
    );
    if (perHour === 0n) throw invalid('lease must request at least one resource (vcpus, memory, or disk)');
    const base = ceilDiv(checked(perHour * minutes), 60n);
    const cost = ceilDiv(checked(base * checked(multiplierMilli)), 1000n);
    return cost > 1n ? cost : 1n;
  } catch (e) {
    if (e instanceof U64Overflow) throw invalid('lease cost overflow');
    throw e;
  }
}

/** `max(1, ⌈cost / stake_divisor⌉)`; the divisor is at least 1. */
export function leaseStake(cost: bigint, stakeDivisor: bigint): bigint {
  const s = ceilDiv(cost, stakeDivisor);
  return s > 1n ? s : 1n;
}

/** R limited by the payout cap at the given TWAP (leases.md §7). */
export function rCapped(r: bigint, cap: bigint, twap: bigint): bigint {
  if (cap === 0n || twap === 0n) return r;
  const scaled = cap * 1000n;
  if (scaled > U64_MAX) return r;
  const limit = ceilDiv(scaled, twap);
  return limit < r ? limit : r;
}

/** XE emitted for one lease segment: `max(1, ⌈cost · R_capped / 1000⌉)`. */
export function emission(cost: bigint, r: bigint, cap: bigint, twap: bigint): bigint {
  const rc = rCapped(r, cap, twap);
  const product = cost * rc;
  if (product > U64_MAX) throw invalid(`lease emission overflow: cost=${cost}, R=${rc}`);
  const e = ceilDiv(product, 1000n);
  return e > 1n ? e : 1n;
}
