// Multisig keysets (ledger.md §9.1): bytes, address and validity.
import { createHash } from 'node:crypto';
import type { Keyset } from '../types.js';
import { invalid } from '../errors.js';
import { isLowerHex } from '../codec/hex.js';
import { ByteWriter } from '../codec/bytes.js';

export const MAX_KEYSET_KEYS = 256;

/** `u32be(threshold) ‖ u32be(n) ‖ raw keys sorted ascending by their lowercase hex text`. */
export function keysetBytes(ks: Keyset): Uint8Array {
  const w = new ByteWriter(8 + 32 * ks.keys.length);
  w.u32be(ks.threshold).u32be(ks.keys.length);
  for (const key of [...ks.keys].sort()) {
    if (!isLowerHex(key, 64)) throw invalid('keyset keys must be 32 bytes of hex');
    w.rawHex(key);
  }
  return w.finish();
}

export function multisigAddress(ks: Keyset): string {
  return createHash('sha256').update(keysetBytes(ks)).digest('hex');
}

/** Throws LedgerError('invalid', 'keyset: …') for the first rule the keyset breaks. */
export function validateKeyset(ks: Keyset): void {
  const n = ks.keys.length;
  if (n === 0) throw invalid('keyset: no keys');
  if (n > MAX_KEYSET_KEYS) throw invalid(`keyset: too many keys: ${n} (max ${MAX_KEYSET_KEYS})`);
  if (!Number.isInteger(ks.threshold) || ks.threshold < 1 || ks.threshold > n) {
    throw invalid(`keyset: threshold ${ks.threshold} out of range 1..${n}`);
  }
  const seen = new Set<string>();
  ks.keys.forEach((key, i) => {
    if (!isLowerHex(key, 64)) throw invalid(`keyset: key ${i} must be 64 hex characters`);
    if (seen.has(key)) throw invalid(`keyset: duplicate key ${key.slice(0, 12)}`);
    seen.add(key);
  });
}
