// ledger.md §12.4 (XUSD only, minters listed in sys.minter as of the block)
import { invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import type { Validator } from './context.js';
import { asOfRejection, checkFrontier, checkMonotone, mismatch, oldBalance } from './common.js';
import { U64_MAX } from '../codec/bytes.js';

export const validateMint: Validator = (ctx, b) => {
  if (b.asset !== 'XUSD') throw invalid('mint: restricted to XUSD');
  if (!(ctx.gov.minters ?? []).includes(b.account)) {
    throw asOfRejection(ctx, `mint: account ${short(b.account)} is not an authorized minter`);
  }
  if (b.destination !== '' || b.source !== '') throw invalid('mint: must not have source or destination');
  if (b.memo !== '') throw invalid('mint: memo not allowed');
  if (b.amount === 0n) throw invalid('mint: amount must be > 0');
  const acct = ctx.view.account(b.account);
  if (!acct && !ctx.staged) {
    if (b.previous !== '0') throw invalid('mint: first block must have previous=0');
    if (b.balance !== b.amount) throw mismatch('mint: balance mismatch', b.amount, b.balance);
  } else {
    if (acct) {
      checkFrontier(ctx, b, acct);
      checkMonotone(ctx, b, acct);
    }
    const old = oldBalance(ctx, b, 'XUSD');
    if (old + b.amount > U64_MAX) throw invalid('mint: balance would overflow uint64');
    if (b.balance !== old + b.amount) throw mismatch('mint: balance mismatch', old + b.amount, b.balance);
  }
  return { minted: b.amount };
};
