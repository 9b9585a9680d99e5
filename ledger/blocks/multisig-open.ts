// ledger.md §12.11, §9
import { invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { multisigAddress, validateKeyset } from '../crypto/multisig.js';
import type { Validator } from './context.js';

export const validateMultisigOpen: Validator = (ctx, b) => {
  if (!b.keyset) throw invalid('multisig_open requires a keyset');
  validateKeyset(b.keyset);
  const derived = multisigAddress(b.keyset);
  if (derived !== b.account) {
    throw invalid(`multisig_open account mismatch: got ${short(b.account)}, want ${short(derived)}`);
  }
  if (ctx.staged || ctx.view.account(b.account)) throw invalid('multisig_open: account already exists');
  if (b.previous !== '0') throw invalid('multisig_open previous must be 0');
  if (b.balance !== 0n) throw invalid(`multisig_open balance must be 0, got ${b.balance}`);
  return { keyset: b.keyset };
};
