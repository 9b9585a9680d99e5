// ledger.md §12.12
import { invalid } from '../errors.js';
import { validateKeyset } from '../crypto/multisig.js';
import type { Validator } from './context.js';
import { checkFrontier, checkMonotone, mismatch, oldBalance } from './common.js';

export const validateMultisigUpdate: Validator = (ctx, b) => {
  const acct = ctx.view.account(b.account);
  if (!acct?.keyset) throw invalid('multisig_update: account is not multisig');
  if (!b.keyset) throw invalid('multisig_update requires a keyset');
  validateKeyset(b.keyset);
  checkFrontier(ctx, b, acct);
  checkMonotone(ctx, b, acct);
  const old = oldBalance(ctx, b, b.asset);
  if (b.balance !== old) throw mismatch('multisig_update balance mismatch', old, b.balance);
  return { keyset: b.keyset };
};
