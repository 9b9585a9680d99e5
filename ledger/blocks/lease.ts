// ledger.md §12.5, leases.md §1
import { invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { leaseCost } from '../state/lease-math.js';
import type { Validator } from './context.js';
import {
  MAX_LEASE_DURATION_SECS,
  chainChecks,
  checkActiveCertificate,
  mismatch,
  oldBalance,
  requireCertificate,
} from './common.js';

export const MAX_VCPUS = 4096n;
export const MAX_MEMORY_MB = 67_108_864n;
export const MAX_DISK_GB = 1_048_576n;

export const validateLease: Validator = (ctx, b) => {
  if (b.asset !== 'XUSD') throw invalid('lease block must have asset=XUSD');
  if (b.destination === '') throw invalid('lease block must have a destination (provider)');
  if (b.destination === b.account) throw invalid('cannot lease to self');
  if (b.vcpus === 0n && b.memory_mb === 0n && b.disk_gb === 0n) {
    throw invalid('lease must request at least one resource (vcpus, memory, or disk)');
  }
  if (b.vcpus > MAX_VCPUS) throw invalid(`lease vcpus must be <= ${MAX_VCPUS}, got ${b.vcpus}`);
  if (b.memory_mb > MAX_MEMORY_MB) throw invalid(`lease memory_mb must be <= ${MAX_MEMORY_MB}, got ${b.memory_mb}`);
  if (b.disk_gb > MAX_DISK_GB) throw invalid(`lease disk_gb must be <= ${MAX_DISK_GB}, got ${b.disk_gb}`);
  const minDuration = ctx.timing.lease_min_duration_secs;
  if (b.duration < minDuration) throw invalid(`lease duration must be >= ${minDuration} seconds`);
  if (b.duration > MAX_LEASE_DURATION_SECS) throw invalid(`lease duration must be <= ${MAX_LEASE_DURATION_SECS} seconds`);

  if (b.access_pub_key !== '') {
    const consumer = ctx.view.account(b.account);
    const signingKeys = [consumer?.pubKey ?? '', ...(consumer?.keyset?.keys ?? [])];
    if (signingKeys.includes(b.access_pub_key)) {
      throw invalid('lease access_pub_key must not be a signing key of the consumer account');
    }
  }

  if (b.certificate_hash === '') throw invalid('lease block must include certificate_hash');
  const cert = requireCertificate(ctx, b.certificate_hash);
  if (cert.provider !== b.destination) {
    throw invalid(
      `certificate ${short(cert.hash)} belongs to ${short(cert.provider)}, not lease destination ${short(b.destination)}`,
    );
  }
  checkActiveCertificate(ctx, cert, b.timestamp, 'block timestamp');
  const cost = leaseCost(b, cert.price_multiplier_milli);
  if (b.amount !== cost) {
    throw invalid(`lease cost mismatch: expected ${cost} (multiplier ${cert.price_multiplier_milli}), got ${b.amount}`);
  }

  chainChecks(ctx, b);
  const old = oldBalance(ctx, b, 'XUSD');
  if (b.amount > old) throw invalid(`insufficient XUSD balance: have ${old}, need ${b.amount}`);
  if (b.balance !== old - b.amount) throw mismatch('lease balance mismatch', old - b.amount, b.balance);

  return {
    pendingAdd: {
      send_hash: b.hash,
      source: b.account,
      destination: b.destination,
      amount: b.amount,
      asset: 'XUSD',
      timestamp: b.timestamp,
    },
    lease: {
      expect: null,
      record: {
        lease_hash: b.hash,
        state: 'created',
        consumer: b.account,
        provider: b.destination,
        vcpus: b.vcpus,
        memory_mb: b.memory_mb,
        disk_gb: b.disk_gb,
        duration: b.duration,
        access_pub_key: b.access_pub_key,
        cost: b.amount,
        stake: 0n,
        start_time: 0n,
        certificate_hash: b.certificate_hash,
        locked_r: 0n,
        locked_payout_cap: 0n,
        locked_twap_milli: 0n,
        renewals: [],
        created_at: b.timestamp,
        ended_at: 0n,
        emission: 0n,
      },
    },
    pinCertificate: b.certificate_hash,
  };
};

