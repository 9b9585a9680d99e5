// ledger.md §12.3 (XE only)
import { invalid } from '../errors.js';
import { memoError } from '../codec/block.js';
import type { Validator } from './context.js';
import { chainChecks, mismatch, oldBalance } from './common.js';

export const validateBurn: Validator = (ctx, b) => {
  if (b.asset !== 'XE') throw invalid('burn: restricted to XE');
  if (b.destination !== '' || b.source !== '') throw invalid('burn: must not have source or destination');
  if (b.amount === 0n) throw invalid('burn: amount must be > 0');
  chainChecks(ctx, b);
  const old = oldBalance(ctx, b, 'XE');
  if (b.amount > old) throw invalid(`insufficient balance: have ${old} XE, burning ${b.amount}`);
  if (b.balance !== old - b.amount) throw mismatch('burn: balance mismatch', old - b.amount, b.balance);
  const memo = memoError(b.memo);
  if (memo) throw invalid(`burn: ${memo}`);
  return { burned: b.amount };
};
