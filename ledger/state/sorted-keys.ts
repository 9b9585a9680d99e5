// A set of string keys read in sorted order (account addresses for paged listings and the frontier
// fingerprint). Sorting the whole set on every read made each page of `GET /accounts` and each
// status sample O(n log n) in the number of accounts; here keys added since the last read are
// sorted alone and merged in, so a read costs O(n + k log k) for k new keys, and nothing when none.

export class SortedKeys {
  private sorted: string[] = [];
  private added: string[] = [];
  private readonly removed = new Set<string>();

  /** `key` must not be in the set. */
  add(key: string): void {
    if (this.removed.delete(key)) return; // removed and re-added before a read: still in `sorted`
    this.added.push(key);
  }

  /** `key` must be in the set. */
  delete(key: string): void {
    const i = this.added.indexOf(key);
    if (i >= 0) this.added.splice(i, 1);
    else this.removed.add(key);
  }

  clear(): void {
    this.sorted = [];
    this.added = [];
    this.removed.clear();
  }

  /** All keys, ascending (code-unit order, as `Array.prototype.sort`). Valid until the next change. */
  keys(): readonly string[] {
    if (this.removed.size > 0) {
      this.sorted = this.sorted.filter((k) => !this.removed.has(k));
      this.removed.clear();
    }
    if (this.added.length > 0) {
      this.sorted = mergeSorted(this.sorted, this.added.sort());
      this.added = [];
    }
    return this.sorted;
  }

  /** At most `count` keys strictly greater than `after` (from the first when undefined), ascending. */
  keysAfter(after: string | undefined, count: number): string[] {
    const keys = this.keys();
    let lo = 0;
    let hi = keys.length;
    while (after !== undefined && lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! <= after) lo = mid + 1;
      else hi = mid;
    }
    return keys.slice(lo, lo + count);
  }
}

function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) out[n++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[n++] = a[i++]!;
  while (j < b.length) out[n++] = b[j++]!;
  return out;
}
