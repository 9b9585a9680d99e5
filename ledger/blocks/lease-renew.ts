// leases.md §10.2–§10.3
import { LedgerError, invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { leaseCost } from '../state/lease-math.js';
import { NS_PER_SECOND, cloneLease, leaseExpiry } from '../state/records.js';
import type { Validator } from './context.js';
import {
  MAX_LEASE_DURATION_SECS,
  attestedTime,
  chainChecks,
  checkActiveCertificate,
  checkLockedParams,
  mismatch,
  oldBalance,
  requireCertificate,
  requireLeaseBlock,
  requireSource,
  requireTimekeepers,
} from './common.js';
import { I64_MAX } from '../codec/bytes.js';

export const validateLeaseRenew: Validator = (ctx, b) => {
  if (b.asset !== 'XUSD') throw invalid('lease_renew must have asset=XUSD');
  requireSource(b, 'a lease (source)');
  const lease = requireLeaseBlock(ctx, b);
  if (lease.consumer !== b.account) throw invalid('lease_renew: only the consumer can renew a lease');
  if (lease.state === 'settled' || lease.state === 'unfulfilled') throw invalid('lease already settled');
  if (lease.state === 'created') {
    throw new LedgerError('not_yet', 'lease not yet accepted for renew (state created): retry after accept');
  }
  if (lease.state !== 'accepted') throw invalid(`cannot renew lease in ${lease.state} state`);

  const minDuration = ctx.timing.lease_min_duration_secs;
  if (b.duration < minDuration) throw invalid(`lease_renew duration must be >= ${minDuration} seconds`);
  if (b.duration > MAX_LEASE_DURATION_SECS) {
    throw invalid(`lease_renew duration must be <= ${MAX_LEASE_DURATION_SECS} seconds`);
  }

  if (b.certificate_hash === '') throw invalid('lease_renew must include certificate_hash');
  const cert = requireCertificate(ctx, b.certificate_hash);
  if (cert.provider !== lease.provider) {
    throw invalid(
      `certificate ${short(cert.hash)} belongs to ${short(cert.provider)}, not lease provider ${short(lease.provider)}`,
    );
  }
  const cost = leaseCost({ ...lease, duration: b.duration }, cert.price_multiplier_milli);
  if (b.amount !== cost) {
    throw invalid(`lease_renew cost mismatch: expected ${cost} (multiplier ${cert.price_multiplier_milli}), got ${b.amount}`);
  }

  chainChecks(ctx, b);
  const old = oldBalance(ctx, b, 'XUSD');
  if (b.amount > old) throw invalid(`insufficient XUSD balance: have ${old}, need ${b.amount}`);
  if (b.balance !== old - b.amount) throw mismatch('lease_renew balance mismatch', old - b.amount, b.balance);

  const tk = requireTimekeepers(ctx, 'lease_renew');
  const renewTime = attestedTime(ctx, b, tk);
  const expiry = leaseExpiry(lease);
  if (renewTime >= expiry) {
    throw invalid(`lease_renew: lease expired at ${expiry}, renewal attested at ${renewTime}`);
  }
  checkActiveCertificate(ctx, cert, renewTime, 'renew time');
  checkLockedParams(ctx, b, renewTime, 'renew');
  if (expiry + b.duration * NS_PER_SECOND > I64_MAX) throw invalid('lease_renew: effective expiry overflows');

  const record = cloneLease(lease);
  record.renewals.push({
    renew_hash: b.hash,
    duration: b.duration,
    cost: b.amount,
    start_time: renewTime,
    locked_r: b.locked_r,
    locked_payout_cap: b.locked_payout_cap,
    locked_twap_milli: b.locked_twap_milli,
  });
  return {
    pendingGrow: { hash: b.source, amount: b.amount },
    lease: { record, expect: 'accepted' },
    pinCertificate: b.certificate_hash,
  };
};
