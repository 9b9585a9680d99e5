// Hex helpers. Protocol hex is lowercase only: uppercase is rejected, never normalized (README.md "Values").

const LOWER_HEX_RE = /^[0-9a-f]*$/;

/** True when `s` is exactly `length` lowercase hex characters (any length when omitted). */
export function isLowerHex(s: unknown, length?: number): s is string {
  return typeof s === 'string' && (length === undefined || s.length === length) && LOWER_HEX_RE.test(s);
}

export function isHash(s: unknown): s is string {
  return isLowerHex(s, 64);
}

export function hexToBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** `short(x)` of the protocol docs: the first 12 characters and `...` when longer. */
export function short(x: string): string {
  return x.length > 12 ? `${x.slice(0, 12)}...` : x;
}

export const ZERO_HASH = '0'.repeat(64);
