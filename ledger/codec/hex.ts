// Hex helpers. Protocol hex is lowercase only: uppercase is rejected, never normalized (README.md "Values").

/** 1 at the char codes of 0-9 and a-f. */
const LOWER_HEX_DIGIT = new Uint8Array(0x67);
for (const c of '0123456789abcdef') LOWER_HEX_DIGIT[c.charCodeAt(0)] = 1;

/**
 * True when `s` is exactly `length` lowercase hex characters (any length when omitted). A table
 * loop rather than a regular expression: ~30 % cheaper on the 64- and 128-character fields of
 * every submitted block, most of them slices of a request body.
 */
export function isLowerHex(s: unknown, length?: number): s is string {
  if (typeof s !== 'string' || (length !== undefined && s.length !== length)) return false;
  for (let i = 0; i < s.length; i++) {
    if (LOWER_HEX_DIGIT[s.charCodeAt(i)] !== 1) return false;
  }
  return true;
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
