// ledger.md §12.1
import { invalid } from '../errors.js';
import { memoError } from '../codec/block.js';
import type { Validator } from './context.js';
import { chainChecks, mismatch, oldBalance } from './common.js';

export const validateSend: Validator = (ctx, b) => {
  chainChecks(ctx, b);
  if (b.amount === 0n) throw invalid('send amount must be > 0');
  const old = oldBalance(ctx, b, b.asset);
  if (b.amount > old) throw invalid(`insufficient balance: have ${old}, sending ${b.amount}`);
  if (b.balance !== old - b.amount) throw mismatch('balance mismatch', old - b.amount, b.balance);
  if (b.destination === '') throw invalid('send must have a destination');
  if (b.destination === b.account) throw invalid('cannot send to self');
  const memo = memoError(b.memo);
  if (memo) throw invalid(`send: ${memo}`);
  return {
    pendingAdd: {
      send_hash: b.hash,
      source: b.account,
      destination: b.destination,
      amount: b.amount,
      asset: b.asset,
      timestamp: b.timestamp,
    },
  };
};
