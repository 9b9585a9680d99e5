// Rules shared by several block types (ledger.md §12 "Shared rules", leases.md §5, §6, §9.6).
import { LedgerError, invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { verifyAttestation, lowerMedian } from '../crypto/attestation.js';
import type { Block, Certificate } from '../types.js';
import type { AccountState } from '../state/records.js';
import type { ValidationContext } from './context.js';

export const MAX_LEASE_DURATION_SECS = 31_536_000n;
export const STATECHAIN_RETRY = ': retry after statechain syncs';

export function mismatch(prefix: string, expected: bigint, got: bigint): LedgerError {
  return invalid(`${prefix}: expected ${expected}, got ${got}`);
}

/** A failed rule that read an as-of governance value (statechain.md §11): retryable on an unsettled sync. */
export function asOfRejection(ctx: ValidationContext, message: string): LedgerError {
  if (ctx.path === 'sync' && !ctx.gov.settled) return new LedgerError('statechain_lag', message + STATECHAIN_RETRY);
  return invalid(message);
}

export function requireChain(ctx: ValidationContext, block: Block): AccountState {
  const acct = ctx.view.account(block.account);
  if (!acct) throw new LedgerError('missing_dependency', `${block.type} from unopened account: ${short(block.account)}`);
  return acct;
}

export function checkFrontier(ctx: ValidationContext, block: Block, acct: AccountState | undefined): void {
  if (ctx.staged) return;
  const frontier = acct ? acct.frontier : '0';
  if (block.previous !== frontier) {
    throw new LedgerError('frontier', `previous mismatch: got ${short(block.previous)}, want ${short(frontier)}`);
  }
}

export function checkMonotone(ctx: ValidationContext, block: Block, acct: AccountState): void {
  if (ctx.staged) return;
  if (block.timestamp < acct.lastTimestamp) {
    throw invalid(`block timestamp ${block.timestamp} is before previous block timestamp ${acct.lastTimestamp}`);
  }
}

/** "Chain exists; previous = frontier; monotone timestamp." */
export function chainChecks(ctx: ValidationContext, block: Block): AccountState {
  const acct = requireChain(ctx, block);
  checkFrontier(ctx, block, acct);
  checkMonotone(ctx, block, acct);
  return acct;
}

/** Running balance (§17.1) of the block's account in `asset`, at the parent position when staged. */
export function oldBalance(ctx: ValidationContext, block: Block, asset: string): bigint {
  if (ctx.staged) return ctx.staged.balances.get(asset) ?? 0n;
  return ctx.view.account(block.account)?.balances.get(asset) ?? 0n;
}

/** Timekeepers as of the block, or `<type>: timekeepers not configured`. */
export function requireTimekeepers(ctx: ValidationContext, type: string): { keys: string[]; threshold: number } {
  const tk = ctx.gov.timekeepers;
  if (!tk || tk.threshold === 0) throw asOfRejection(ctx, `${type}: timekeepers not configured`);
  return tk;
}

/** leases.md §5.3: the attested time (lower median of the valid attestations over `source`). */
export function attestedTime(ctx: ValidationContext, block: Block, tk: { keys: string[]; threshold: number }): bigint {
  const prefix = `${block.type} attestation: `;
  const n = block.attestations.length;
  if (n < tk.threshold) throw asOfRejection(ctx, `${prefix}need ${tk.threshold} attestations, got ${n}`);
  const trusted = new Set(tk.keys);
  const counted = new Set<string>();
  const times: bigint[] = [];
  for (const a of block.attestations) {
    if (!trusted.has(a.public_key) || counted.has(a.public_key)) continue;
    if (ctx.path === 'live') {
      const skew = a.timestamp - ctx.now;
      if ((skew < 0n ? -skew : skew) > ctx.timing.max_attestation_skew_ns) continue;
    }
    if (!verifyAttestation(a, block.source)) continue;
    counted.add(a.public_key);
    times.push(a.timestamp);
  }
  if (times.length < tk.threshold || times.length === 0) {
    throw asOfRejection(
      ctx,
      `${prefix}only ${times.length} valid attestations from trusted timekeepers, need ${tk.threshold}`,
    );
  }
  return lowerMedian(times);
}

/** The certificate named by the block, or the retryable `certificate <short> not found`. */
export function requireCertificate(ctx: ValidationContext, hash: string): Certificate {
  const cert = ctx.view.certificate(hash);
  if (!cert) throw new LedgerError('missing_dependency', `certificate ${short(hash)} not found`);
  return cert;
}

/**
 * The certificate must be the provider's active one at `at` (leases.md §9.6); `what` names the time
 * in messages (`block timestamp`, `renew time`). The superseded check runs on the live path only.
 */
export function checkActiveCertificate(ctx: ValidationContext, cert: Certificate, at: bigint, what: string): void {
  if (cert.issued_at > at) {
    throw invalid(`certificate ${short(cert.hash)} not yet valid: issued_at ${cert.issued_at}, ${what} ${at}`);
  }
  if (cert.expires_at !== 0n && at > cert.expires_at) {
    throw invalid(`certificate ${short(cert.hash)} expired: expires_at ${cert.expires_at}, ${what} ${at}`);
  }
  if (ctx.path === 'live') {
    const newer = ctx.view.supersededBy(cert, at);
    if (newer) {
      throw invalid(`certificate ${short(cert.hash)} superseded by ${short(newer.hash)} at ${what} ${at}`);
    }
  }
}

/** leases.md §6: the locked triple must equal one epoch candidate at time `at`. */
export function checkLockedParams(ctx: ValidationContext, block: Block, at: bigint, kind: 'accept' | 'renew'): void {
  const type = block.type;
  if (block.locked_r === 0n) {
    throw invalid(
      kind === 'accept'
        ? `${type} missing locked emission params: locked_r must be set (the accept must carry locked_r/locked_payout_cap/locked_twap)`
        : `${type} missing locked emission params: locked_r must be set`,
    );
  }
  const candidates = ctx.gov.epochCandidates(at);
  if (candidates.length === 0) {
    throw new LedgerError('statechain_lag', `${type} epoch not yet available for ${kind} time ${at}${STATECHAIN_RETRY}`);
  }
  const match = candidates.some(
    (e) =>
      e.r_effective === block.locked_r &&
      e.payout_cap === block.locked_payout_cap &&
      e.twap_milli_usd === block.locked_twap_milli,
  );
  if (match) return;
  const cover = candidates[0]!;
  const detail =
    `block (R=${block.locked_r} cap=${block.locked_payout_cap} twap=${block.locked_twap_milli}) != ` +
    `epoch@${kind} (R=${cover.r_effective} cap=${cover.payout_cap} twap=${cover.twap_milli_usd})`;
  if (ctx.path === 'sync' && !ctx.gov.settled) {
    throw new LedgerError('statechain_lag', `${type} locked emission mismatch on sync: ${detail}${STATECHAIN_RETRY}`);
  }
  throw invalid(`${type} locked emission mismatch: ${detail}`);
}

/** A lease-family block's `source` must name a lease block (ledger.md §12.6 rule 3 and alike). */
export function requireLeaseBlock(ctx: ValidationContext, block: Block) {
  const lease = ctx.view.lease(block.source);
  if (lease) return lease;
  if (ctx.view.hasBlock(block.source)) throw invalid(`${block.type} source ${short(block.source)} is not a lease block`);
  throw new LedgerError('missing_dependency', `source lease block not found: ${short(block.source)}`);
}

export function requireSource(block: Block, what: string): void {
  if (block.source === '') throw invalid(`${block.type} must reference ${what}`);
}
