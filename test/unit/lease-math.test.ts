import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { I64_MAX, U64_MAX } from '../../ledger/codec/bytes.js';
import {
  ceilDiv,
  emission,
  leaseCost,
  leaseStake,
  rCapped,
} from '../../ledger/state/lease-math.js';
import { LedgerError } from '../../ledger/errors.js';

type Obj = Record<string, JsonValue>;
const vectors = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as Obj;

function ledgerMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LedgerError);
    expect((e as LedgerError).code).toBe('invalid');
    return (e as Error).message;
  }
  throw new Error('expected a LedgerError');
}

describe('constants and ceilDiv', () => {
  it('limits', () => {
    expect(U64_MAX).toBe(18446744073709551615n);
    expect(I64_MAX).toBe(9223372036854775807n);
  });

  it('rounds up, 0 stays 0, no overflow at the top', () => {
    expect(ceilDiv(0n, 7n)).toBe(0n);
    expect(ceilDiv(1n, 7n)).toBe(1n);
    expect(ceilDiv(7n, 7n)).toBe(1n);
    expect(ceilDiv(8n, 7n)).toBe(2n);
    expect(ceilDiv(U64_MAX, 1n)).toBe(U64_MAX);
    expect(ceilDiv(U64_MAX, 2n)).toBe(1n << 63n);
    expect(() => ceilDiv(1n, 0n)).toThrow(RangeError);
  });
});

describe('lease cost and stake (leases.md §1.2, §2)', () => {
  for (const v of vectors.lease_cost_vectors as Obj[]) {
    it(`${v.vcpus} vcpu / ${v.memory_mb} MiB / ${v.disk_gb} GiB / ${v.duration} s ×${v.price_multiplier_milli}`, () => {
      const cost = leaseCost(
        {
          vcpus: v.vcpus as bigint,
          memory_mb: v.memory_mb as bigint,
          disk_gb: v.disk_gb as bigint,
          duration: v.duration as bigint,
        },
        v.price_multiplier_milli as bigint,
      );
      expect(cost).toBe(v.cost);
      expect(leaseStake(cost, 5n)).toBe(v.stake_divisor_5);
      expect(leaseStake(cost, 1n)).toBe(v.stake_divisor_1);
    });
  }

  it('the cost is at least 1', () => {
    expect(leaseCost({ vcpus: 0n, memory_mb: 0n, disk_gb: 1n, duration: 0n }, 500n)).toBe(1n);
    expect(leaseStake(1n, 5n)).toBe(1n);
  });

  it('overflow anywhere is "lease cost overflow"', () => {
    const base = { vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 300n };
    expect(ledgerMessage(() => leaseCost({ ...base, vcpus: U64_MAX }, 1000n))).toBe('lease cost overflow');
    expect(ledgerMessage(() => leaseCost({ ...base, disk_gb: U64_MAX / 1000n + 1n }, 1000n))).toBe('lease cost overflow');
    expect(ledgerMessage(() => leaseCost({ ...base, duration: U64_MAX }, 1000n))).toBe('lease cost overflow');
    expect(ledgerMessage(() => leaseCost(base, U64_MAX))).toBe('lease cost overflow');
    // per_hour sums to just over u64 from three in-range products
    const third = U64_MAX / 3n;
    expect(
      ledgerMessage(() =>
        leaseCost({ vcpus: third / 20000n, memory_mb: (third / 10000n) * 1024n, disk_gb: third / 1000n + 100_000n, duration: 1n }, 1n),
      ),
    ).toBe('lease cost overflow');
    expect(ledgerMessage(() => leaseCost({ ...base, vcpus: -1n }, 1000n))).toBe('lease cost overflow');
  });

  it('no resource at all is rejected', () => {
    expect(ledgerMessage(() => leaseCost({ vcpus: 0n, memory_mb: 0n, disk_gb: 0n, duration: 60n }, 1000n))).toBe(
      'lease must request at least one resource (vcpus, memory, or disk)',
    );
  });
});

describe('emission (leases.md §7)', () => {
  for (const v of vectors.emission_vectors as Obj[]) {
    it(`cost ${v.cost} R ${v.locked_r} cap ${v.locked_payout_cap} twap ${v.locked_twap_milli}`, () => {
      const [c, r, cap, twap] = [v.cost, v.locked_r, v.locked_payout_cap, v.locked_twap_milli] as bigint[];
      expect(rCapped(r!, cap!, twap!)).toBe(v.r_capped);
      expect(emission(c!, r!, cap!, twap!)).toBe(v.emission);
    });
  }

  it('cap·1000 overflow leaves R unchanged', () => {
    expect(rCapped(2000n, U64_MAX / 1000n + 1n, 1n)).toBe(2000n);
    expect(rCapped(2000n, U64_MAX / 1000n, U64_MAX)).toBe(1n);
  });

  it('overflow of cost · R_capped is rejected', () => {
    expect(ledgerMessage(() => emission(U64_MAX, 2000n, 0n, 0n))).toBe(
      `lease emission overflow: cost=${U64_MAX}, R=2000`,
    );
    expect(emission(U64_MAX, 1n, 0n, 0n)).toBe(ceilDiv(U64_MAX, 1000n));
  });

  it('emission is at least 1', () => {
    expect(emission(0n, 2000n, 0n, 0n)).toBe(1n);
    expect(emission(1n, 1n, 0n, 0n)).toBe(1n);
  });
});
