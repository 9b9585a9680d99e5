// ledger.md §12.2
import { LedgerError, invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import type { Validator } from './context.js';
import { checkFrontier, checkMonotone, mismatch, oldBalance } from './common.js';
import { U64_MAX } from '../codec/bytes.js';

export const validateReceive: Validator = (ctx, b) => {
  if (b.source === '') throw invalid('receive must reference a source send');
  const pending = ctx.view.pending(b.source);
  if (!pending) throw new LedgerError('missing_dependency', `source send not pending: ${short(b.source)}`);
  if (pending.destination !== b.account) throw invalid('send not addressed to this account');
  const lease = ctx.view.lease(b.source);
  if (lease && (lease.state === 'created' || lease.state === 'accepted')) {
    throw invalid(`cannot receive a live lease escrow: ${short(b.source)}`);
  }
  if (ctx.view.isSendContested(b.source, pending.source)) {
    throw new LedgerError(
      'conflict',
      `source send ${short(b.source)} is contested by an unresolved conflict — receive deferred pending resolution`,
    );
  }
  const pendingAsset = pending.asset === '' ? 'XE' : pending.asset;
  if (b.asset !== pendingAsset) {
    throw invalid(`receive asset "${b.asset}" does not match pending send asset "${pendingAsset}"`);
  }
  const acct = ctx.view.account(b.account);
  if (!acct && !ctx.staged) {
    if (b.previous !== '0') throw invalid('first block on account must have previous=0');
    if (b.balance !== pending.amount) throw mismatch('open-receive balance mismatch', pending.amount, b.balance);
  } else {
    if (acct) {
      checkMonotone(ctx, b, acct);
      checkFrontier(ctx, b, acct);
    }
    const old = oldBalance(ctx, b, b.asset);
    if (old + pending.amount > U64_MAX) throw invalid('receive would overflow uint64 balance');
    if (b.balance !== old + pending.amount) throw mismatch('receive balance mismatch', old + pending.amount, b.balance);
  }
  return { pendingRemove: b.source };
};
