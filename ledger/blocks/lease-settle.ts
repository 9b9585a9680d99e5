// ledger.md §12.7, leases.md §7, §8.1
import { LedgerError, invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { emission, rCapped } from '../state/lease-math.js';
import { cloneLease, leaseExpiry } from '../state/records.js';
import type { Validator } from './context.js';
import { attestedTime, chainChecks, mismatch, oldBalance, requireSource, requireTimekeepers } from './common.js';
import { U64_MAX } from '../codec/bytes.js';

export const validateLeaseSettle: Validator = (ctx, b) => {
  if (b.asset !== 'XE') throw invalid('lease_settle must have asset=XE');
  requireSource(b, 'a lease (source)');
  const lease = ctx.view.lease(b.source);
  if (!lease) throw new LedgerError('missing_dependency', `lease not found: ${short(b.source)}`);
  if (lease.state === 'settled' || lease.state === 'unfulfilled') throw invalid('lease already settled');
  if (lease.provider !== b.account) throw invalid('lease_settle: provider account mismatch');
  if (lease.state === 'created') {
    throw new LedgerError('not_yet', 'lease not yet accepted for settle (state created): retry after accept');
  }
  if (lease.state !== 'accepted') throw invalid(`lease_settle: lease not settleable in ${lease.state} state`);

  const tk = requireTimekeepers(ctx, 'lease_settle');
  const t = attestedTime(ctx, b, tk);
  const expiry = leaseExpiry(lease);
  if (t < expiry) throw invalid(`lease not yet expired: need timestamp >= ${expiry}, got ${t}`);
  const graceEnd = expiry + ctx.timing.lease_settle_grace_ns;
  if (t > graceEnd) throw invalid(`lease settle past grace: timestamp ${t} exceeds expiry+grace ${graceEnd}`);

  const segments = [
    { cost: lease.cost, r: lease.locked_r, cap: lease.locked_payout_cap, twap: lease.locked_twap_milli },
    ...lease.renewals.map((r) => ({ cost: r.cost, r: r.locked_r, cap: r.locked_payout_cap, twap: r.locked_twap_milli })),
  ];
  let expected = 0n;
  for (const s of segments) expected += emission(s.cost, s.r, s.cap, s.twap);
  if (expected > U64_MAX) throw invalid(`lease emission overflow: cost=${lease.cost}, R=${lease.locked_r}`);
  if (b.amount !== expected) {
    if (lease.renewals.length === 0) {
      const rc = rCapped(lease.locked_r, lease.locked_payout_cap, lease.locked_twap_milli);
      throw invalid(
        `lease_settle XE mismatch: expected ${expected} (cost=${lease.cost}, R=${lease.locked_r}, R_capped=${rc}), got ${b.amount}`,
      );
    }
    throw invalid(`lease_settle XE mismatch: expected ${expected} (segments=${segments.length}), got ${b.amount}`);
  }

  if (!ctx.view.pending(b.source)) throw invalid(`no escrow pending to burn for lease: ${short(b.source)}`);

  chainChecks(ctx, b);
  const old = oldBalance(ctx, b, 'XE');
  if (old + b.amount > U64_MAX) throw invalid('lease_settle would overflow uint64 balance');
  if (b.balance !== old + b.amount) throw mismatch('lease_settle balance mismatch', old + b.amount, b.balance);

  const record = cloneLease(lease);
  record.state = 'settled';
  record.ended_at = b.timestamp;
  record.emission = b.amount;
  return { pendingRemove: b.source, lease: { record, expect: 'accepted' }, stakeReturn: lease.stake };
};
