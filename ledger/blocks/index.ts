// One validator per submittable block type (the genesis is applied only at bootstrap, §19).
import type { BlockType } from '../types.js';
import { invalid } from '../errors.js';
import type { Validator } from './context.js';
import { validateSend } from './send.js';
import { validateReceive } from './receive.js';
import { validateBurn } from './burn.js';
import { validateMint } from './mint.js';
import { validateLease } from './lease.js';
import { validateLeaseAccept } from './lease-accept.js';
import { validateLeaseSettle } from './lease-settle.js';
import { validateLeaseCancel } from './lease-cancel.js';
import { validateLeaseForceSettle } from './lease-force-settle.js';
import { validateLeaseRenew } from './lease-renew.js';
import { validateMultisigOpen } from './multisig-open.js';
import { validateMultisigUpdate } from './multisig-update.js';

export const VALIDATORS: Readonly<Record<Exclude<BlockType, 'genesis'>, Validator>> = {
  send: validateSend,
  receive: validateReceive,
  burn: validateBurn,
  mint: validateMint,
  lease: validateLease,
  lease_accept: validateLeaseAccept,
  lease_settle: validateLeaseSettle,
  lease_cancel: validateLeaseCancel,
  lease_force_settle: validateLeaseForceSettle,
  lease_renew: validateLeaseRenew,
  multisig_open: validateMultisigOpen,
  multisig_update: validateMultisigUpdate,
};

export function validatorFor(type: BlockType): Validator {
  if (type === 'genesis') throw invalid('genesis block rejected: ledger is not empty');
  return VALIDATORS[type];
}
