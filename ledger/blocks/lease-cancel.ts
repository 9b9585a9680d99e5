// ledger.md §12.8, leases.md §8.2–§8.3
import { invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { cloneLease } from '../state/records.js';
import type { Validator } from './context.js';
import { chainChecks, mismatch, oldBalance, requireLeaseBlock, requireSource } from './common.js';

export const validateLeaseCancel: Validator = (ctx, b) => {
  if (b.asset !== 'XUSD') throw invalid('lease_cancel must have asset=XUSD');
  requireSource(b, 'a lease (source)');
  const lease = requireLeaseBlock(ctx, b);
  if (lease.consumer !== b.account) throw invalid('lease_cancel: only the consumer can cancel a lease');
  if (lease.state !== 'created') throw invalid(`cannot cancel lease in ${lease.state} state`);
  if (!ctx.view.pending(b.source)) throw invalid(`no pending send for lease: ${short(b.source)}`);
  chainChecks(ctx, b);
  const expected = oldBalance(ctx, b, 'XUSD') + lease.cost;
  if (b.balance !== expected) throw mismatch('lease_cancel balance mismatch', expected, b.balance);

  const record = cloneLease(lease);
  record.state = 'cancelled';
  record.ended_at = b.timestamp;
  return { pendingRemove: b.source, lease: { record, expect: 'created' } };
};
