// ledger.md §12.9, leases.md §8.4
import { LedgerError, invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { cloneLease, leaseExpiry } from '../state/records.js';
import type { Validator } from './context.js';
import {
  attestedTime,
  chainChecks,
  mismatch,
  oldBalance,
  requireSource,
  requireTimekeepers,
} from './common.js';
import { U64_MAX } from '../codec/bytes.js';

export const validateLeaseForceSettle: Validator = (ctx, b) => {
  if (b.asset !== 'XUSD') throw invalid('lease_force_settle must have asset=XUSD');
  requireSource(b, 'a lease (source)');
  // §12.9 names no "block not found" text for rule 3: a missing source is rule 4's `lease not found`.
  const lease = ctx.view.lease(b.source);
  if (!lease) {
    if (ctx.view.hasBlock(b.source)) throw invalid(`lease_force_settle source ${short(b.source)} is not a lease block`);
    throw new LedgerError('missing_dependency', `lease not found: ${short(b.source)}`);
  }
  if (lease.consumer !== b.account) throw invalid('lease_force_settle: only the consumer can force-settle a lease');
  if (lease.state === 'settled' || lease.state === 'unfulfilled') throw invalid('lease already settled');
  if (lease.state === 'created') {
    throw new LedgerError('not_yet', 'lease not yet accepted for force-settle (state created): retry after accept');
  }
  if (lease.state !== 'accepted') throw invalid(`cannot force-settle lease in ${lease.state} state`);

  const tk = requireTimekeepers(ctx, 'lease_force_settle');
  const t = attestedTime(ctx, b, tk);
  const expiry = leaseExpiry(lease);
  const opensAfter = expiry + ctx.timing.lease_settle_grace_ns + ctx.timing.lease_force_settle_gap_ns;
  if (t <= opensAfter) throw invalid(`lease not yet force-settleable: need timestamp > ${opensAfter}, got ${t}`);
  const closesAt = expiry + ctx.timing.lease_escrow_expiry_ns;
  if (t >= closesAt) throw invalid(`lease escrow expired: refund window closed at ${closesAt}, got ${t}`);

  const escrow = ctx.view.pending(b.source);
  if (!escrow) throw invalid(`no pending escrow for lease: ${short(b.source)}`);

  chainChecks(ctx, b);
  const old = oldBalance(ctx, b, 'XUSD');
  if (old + escrow.amount > U64_MAX) throw invalid('lease_force_settle would overflow uint64 balance');
  if (b.balance !== old + escrow.amount) {
    throw mismatch('lease_force_settle balance mismatch', old + escrow.amount, b.balance);
  }

  const record = cloneLease(lease);
  record.state = 'unfulfilled';
  record.ended_at = b.timestamp;
  return { pendingRemove: b.source, lease: { record, expect: 'accepted' } };
};
