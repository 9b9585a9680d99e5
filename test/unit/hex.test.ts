import { describe, expect, it } from 'vitest';
import { isLowerHex } from '../../ledger/codec/hex.js';

describe('isLowerHex', () => {
  it('accepts exactly the lowercase hex digits, at the asked length', () => {
    expect(isLowerHex('0123456789abcdef')).toBe(true);
    expect(isLowerHex('')).toBe(true);
    expect(isLowerHex('ab'.repeat(32), 64)).toBe(true);
    expect(isLowerHex('ab'.repeat(32), 63)).toBe(false);
    expect(isLowerHex('', 0)).toBe(true);
  });

  // The neighbours of each digit range, uppercase, and characters past the table's end.
  it.each(['/', ':', '`', 'g', 'A', 'F', 'G', ' ', '\u0100', '\u0130', '\uff10', 'ａ'])('refuses %j anywhere', (c) => {
    expect(isLowerHex(c)).toBe(false);
    expect(isLowerHex(`${c}${'0'.repeat(63)}`, 64)).toBe(false);
    expect(isLowerHex(`${'0'.repeat(63)}${c}`, 64)).toBe(false);
  });

  it('refuses what is not a string', () => {
    for (const v of [undefined, null, 12, 0x12n, ['ab'], { length: 2 }]) expect(isLowerHex(v)).toBe(false);
  });
});
