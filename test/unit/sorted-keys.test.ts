// SortedKeys against a plain sorted array under random additions, removals and reads.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SortedKeys } from '../../ledger/state/sorted-keys.js';

describe('SortedKeys', () => {
  it('reads like sorting the live set, through interleaved adds, deletes, re-adds and reads', () => {
    const keys = new SortedKeys();
    const live = new Set<string>();
    const removedOnce: string[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let step = 0; step < 5000; step++) {
      const r = next() % 10;
      if (r < 5) {
        const k = randomBytes(4).toString('hex');
        if (!live.has(k)) {
          keys.add(k);
          live.add(k);
        }
      } else if (r < 7 && live.size > 0) {
        const all = [...live];
        const k = all[next() % all.length]!;
        keys.delete(k);
        live.delete(k);
        removedOnce.push(k);
      } else if (r < 8 && removedOnce.length > 0) {
        const k = removedOnce.pop()!;
        if (!live.has(k)) {
          keys.add(k);
          live.add(k);
        }
      } else {
        const expected = [...live].sort();
        expect(keys.keys()).toEqual(expected);
        const after = expected[Math.floor(expected.length / 2)];
        const past = expected.filter((k) => after === undefined || k > after);
        expect(keys.keysAfter(after, Number.MAX_SAFE_INTEGER)).toEqual(past);
        expect(keys.keysAfter(after, 3)).toEqual(past.slice(0, 3));
      }
    }
    expect(keys.keys()).toEqual([...live].sort());
  });

  it('a key removed and added back before a read appears once', () => {
    const keys = new SortedKeys();
    keys.add('b');
    keys.add('a');
    expect(keys.keys()).toEqual(['a', 'b']);
    keys.delete('a');
    keys.add('a');
    keys.add('c');
    expect(keys.keys()).toEqual(['a', 'b', 'c']);
    keys.delete('c');
    expect(keys.keysAfter('a', 10)).toEqual(['b']);
    expect(keys.keysAfter(undefined, 10)).toEqual(['a', 'b']);
    expect(keys.keysAfter(undefined, 1)).toEqual(['a']);
    keys.clear();
    expect(keys.keys()).toEqual([]);
  });
});
