// ledger.md §12.6, leases.md §2, §5, §6
import { invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { leaseStake } from '../state/lease-math.js';
import { cloneLease } from '../state/records.js';
import type { Validator } from './context.js';
import {
  STATECHAIN_RETRY,
  attestedTime,
  chainChecks,
  checkLockedParams,
  mismatch,
  oldBalance,
  requireCertificate,
  requireLeaseBlock,
  requireSource,
  requireTimekeepers,
} from './common.js';
import { LedgerError } from '../errors.js';

export const validateLeaseAccept: Validator = (ctx, b) => {
  if (b.asset !== 'XUSD') throw invalid('lease_accept must have asset=XUSD');
  requireSource(b, 'a lease (source)');
  const lease = requireLeaseBlock(ctx, b);
  if (lease.provider !== b.account) throw invalid('lease_accept: provider account mismatch');
  if (lease.state === 'accepted') throw invalid('lease already accepted');
  if (lease.state !== 'created') throw invalid(`cannot accept lease in ${lease.state} state`);

  const stake = leaseStake(lease.cost, ctx.gov.stakeDivisor);
  if (b.amount !== stake) {
    if (ctx.path === 'sync' && !ctx.gov.settled) {
      throw new LedgerError(
        'statechain_lag',
        `lease_accept stake mismatch on sync: expected ${stake}, got ${b.amount}${STATECHAIN_RETRY}`,
      );
    }
    throw mismatch('lease_accept stake mismatch', stake, b.amount);
  }

  chainChecks(ctx, b);
  const old = oldBalance(ctx, b, 'XUSD');
  if (b.amount > old) throw invalid(`insufficient XUSD balance for stake: have ${old}, need ${b.amount}`);
  if (b.balance !== old - b.amount) throw mismatch('lease_accept balance mismatch', old - b.amount, b.balance);

  const tk = requireTimekeepers(ctx, 'lease_accept');
  const startTime = attestedTime(ctx, b, tk);

  if (b.certificate_hash === '') throw invalid('lease_accept must include certificate_hash');
  if (b.certificate_hash !== lease.certificate_hash) {
    throw invalid(
      `lease_accept certificate_hash mismatch: lease uses ${short(lease.certificate_hash)}, accept uses ${short(b.certificate_hash)}`,
    );
  }
  const cert = requireCertificate(ctx, b.certificate_hash);
  if (cert.provider !== b.account) {
    throw invalid(`certificate ${short(cert.hash)} belongs to ${short(cert.provider)}, not provider ${short(b.account)}`);
  }
  if (cert.expires_at !== 0n && startTime > cert.expires_at) {
    throw invalid(`certificate ${short(cert.hash)} expired: expires_at ${cert.expires_at}, start_time ${startTime}`);
  }

  checkLockedParams(ctx, b, startTime, 'accept');

  const record = cloneLease(lease);
  record.state = 'accepted';
  record.stake = b.amount;
  record.start_time = startTime;
  record.locked_r = b.locked_r;
  record.locked_payout_cap = b.locked_payout_cap;
  record.locked_twap_milli = b.locked_twap_milli;
  return { lease: { record, expect: 'created' } };
};
