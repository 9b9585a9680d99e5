// Step 9 of the pipeline: single-key credentials (ledger.md §8) and multisig signatures (§9.3).
import { LedgerError, invalid } from '../errors.js';
import { short } from '../codec/hex.js';
import { validateKeyset } from '../crypto/multisig.js';
import type { Block, Keyset } from '../types.js';
import type { AccountState } from '../state/records.js';

/** Verifies an ed25519 signature over a block hash (32 raw bytes). Injectable for batch pre-verification. */
export type HashSignatureVerifier = (publicKeyHex: string, hashHex: string, signatureHex: string) => boolean;

export function checkMultisigSignatures(block: Block, keyset: Keyset, verify: HashSignatureVerifier): void {
  const sigs = block.signatures ?? [];
  if (sigs.length === 0) throw invalid('multisig: no signatures');
  if (sigs.length > keyset.keys.length) {
    throw invalid(`multisig: too many signatures: got ${sigs.length}, keyset has ${keyset.keys.length}`);
  }
  const seen = new Set<string>();
  for (const s of sigs) {
    if (seen.has(s.public_key)) throw invalid(`multisig: duplicate signer: ${s.public_key.slice(0, 12)}`);
    seen.add(s.public_key);
  }
  const members = new Set(keyset.keys);
  for (const s of sigs) {
    if (!members.has(s.public_key)) throw invalid(`multisig: signer ${s.public_key.slice(0, 12)} not in keyset`);
  }
  for (const s of sigs) {
    if (!verify(s.public_key, block.hash, s.signature)) {
      throw invalid(`multisig: sig from ${s.public_key.slice(0, 12)}: signature verification failed`);
    }
  }
  if (sigs.length < keyset.threshold) {
    throw invalid(`multisig: insufficient signatures: got ${sigs.length}, need ${keyset.threshold}`);
  }
}

function keysetIsValid(ks: Keyset): boolean {
  try {
    validateKeyset(ks);
    return true;
  } catch {
    return false;
  }
}

export function checkCredentials(block: Block, acct: AccountState | undefined, verify: HashSignatureVerifier): void {
  if (block.signatures !== null) {
    if (block.type === 'multisig_open') {
      // Checked against its own keyset; a missing or invalid keyset is the validator's error (§12.11).
      if (block.keyset && keysetIsValid(block.keyset)) checkMultisigSignatures(block, block.keyset, verify);
      return;
    }
    if (!acct) {
      throw new LedgerError(
        'missing_dependency',
        `block has signatures but multisig keyset is not known: unopened account ${short(block.account)} (multisig_open not yet synced)`,
      );
    }
    if (!acct.keyset) throw invalid('block has signatures but account is not multisig');
    checkMultisigSignatures(block, acct.keyset, verify);
    return;
  }
  if (acct?.keyset) throw invalid('multisig account requires signatures');
  if (block.previous === '0') return; // the opening block's own signature was checked by verify (§7.4)
  if (!acct || acct.pubKey === '') {
    throw new LedgerError(
      'missing_dependency',
      `signature: unopened account ${short(block.account)} has no declared public key`,
    );
  }
  if (!verify(acct.pubKey, block.hash, block.signature)) throw invalid('signature: signature verification failed');
}
