// Timekeeper attestations (leases.md §5.2): ed25519 over sha256(raw(identifier) ‖ u64be(timestamp)).
import { createHash } from 'node:crypto';
import type { Attestation } from '../types.js';
import { isLowerHex } from '../codec/hex.js';
import { publicKeyFromSeed, signEd25519, verifyEd25519 } from './ed25519.js';
import { I64_MAX, I64_MIN } from '../codec/bytes.js';

export function attestationPayload(identifierHex: string, timestamp: bigint): Uint8Array {
  const pre = Buffer.alloc(40);
  pre.write(identifierHex, 0, 32, 'hex');
  pre.writeBigInt64BE(timestamp, 32);
  return createHash('sha256').update(pre).digest();
}

export function signAttestation(seed: Uint8Array, identifierHex: string, timestamp: bigint): Attestation {
  return {
    public_key: publicKeyFromSeed(seed),
    timestamp,
    signature: signEd25519(seed, attestationPayload(identifierHex, timestamp)),
  };
}

export function verifyAttestation(a: Attestation, identifierHex: string): boolean {
  if (!isLowerHex(identifierHex, 64)) return false;
  if (a.timestamp < I64_MIN || a.timestamp > I64_MAX) return false;
  return verifyEd25519(a.public_key, attestationPayload(identifierHex, a.timestamp), a.signature);
}

/** Sorted ascending, the element at ⌊(n − 1) / 2⌋ (leases.md §5.3). Throws on an empty list. */
export function lowerMedian(timestamps: bigint[]): bigint {
  if (timestamps.length === 0) throw new RangeError('lower median of an empty list');
  const sorted = [...timestamps].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
