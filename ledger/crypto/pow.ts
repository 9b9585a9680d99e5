// Proof of work (ledger.md §10): value = u64be(blake2b8(u64le(nonce) ‖ raw(hash))); higher is harder.
import { blake2b } from '@noble/hashes/blake2.js';
import { U64_MAX } from '../codec/bytes.js';

/** Bytes of a proof-of-work preimage: u64le(nonce) ‖ raw(hash). */
const POW_PREIMAGE_BYTES = 40;

/** Throws RangeError when the nonce is not a u64. */
export function powValue(nonce: bigint, hashHex: string): bigint {
  const input = Buffer.alloc(POW_PREIMAGE_BYTES);
  input.writeBigUInt64LE(nonce, 0);
  input.write(hashHex, 8, 32, 'hex');
  const digest = blake2b(input, { dkLen: 8 });
  return Buffer.from(digest.buffer, digest.byteOffset, 8).readBigUInt64BE(0);
}

export function powValid(nonce: bigint, hashHex: string, difficulty: bigint): boolean {
  return difficulty === 0n || powValue(nonce, hashHex) >= difficulty;
}

/** Smallest nonce ≥ startNonce meeting the difficulty (wraps past 2^64−1). */
export function solvePow(hashHex: string, difficulty: bigint, startNonce = 0n): bigint {
  if (difficulty === 0n) return startNonce;
  const input = Buffer.alloc(POW_PREIMAGE_BYTES);
  input.write(hashHex, 8, 32, 'hex');
  let nonce = startNonce;
  for (;;) {
    input.writeBigUInt64LE(nonce, 0);
    if (Buffer.from(blake2b(input, { dkLen: 8 })).readBigUInt64BE(0) >= difficulty) return nonce;
    nonce = nonce === U64_MAX ? 0n : nonce + 1n;
  }
}

/** Lowercase hex, no `0x`, no leading zeros; zero is `"0"`. */
export function formatDifficulty(d: bigint): string {
  return d.toString(16);
}

/** Hex with or without `0x`, at most 16 digits; throws RangeError on anything else. */
export function parseDifficulty(s: string): bigint {
  const digits = s.startsWith('0x') || s.startsWith('0X') ? s.slice(2) : s;
  if (!/^[0-9a-fA-F]{1,16}$/.test(digits)) throw new RangeError(`invalid difficulty: ${JSON.stringify(s)}`);
  return BigInt(`0x${digits}`);
}
