// Delegation weights (ledger.md §16): only XE counts; weight(rep) = Σ latest XE balances of the
// accounts delegating to rep, kept incrementally on each commit.
export interface EligibilityPolicy {
  /** null = open (every representative counts). */
  allowlist: string[] | null;
}

export interface WeightReport {
  weights: Map<string, bigint>;
  ineligible: Map<string, bigint>;
  total: bigint;
  ineligibleTotal: bigint;
  restricted: boolean;
  failedOpen: boolean;
}

export class Delegation {
  private readonly weights = new Map<string, bigint>();

  clear(): void {
    this.weights.clear();
  }

  add(rep: string, amount: bigint): void {
    if (rep === '' || amount === 0n) return;
    this.weights.set(rep, (this.weights.get(rep) ?? 0n) + amount);
  }

  /** Whether subtracting `oldXe` from `oldRep` would clamp at 0 (counted as `delegation_underflows`). */
  wouldUnderflow(oldRep: string, oldXe: bigint): boolean {
    return oldRep !== '' && oldXe !== 0n && (this.weights.get(oldRep) ?? 0n) < oldXe;
  }

  /** Subtract the old balance from the old rep (clamped at 0) and add the new one. */
  move(oldRep: string, oldXe: bigint, newRep: string, newXe: bigint): void {
    if (oldRep !== '' && oldXe !== 0n) {
      const w = this.weights.get(oldRep) ?? 0n;
      const next = w < oldXe ? 0n : w - oldXe;
      if (next === 0n) this.weights.delete(oldRep);
      else this.weights.set(oldRep, next);
    }
    this.add(newRep, newXe);
  }

  weight(rep: string): bigint {
    return this.weights.get(rep) ?? 0n;
  }

  /** Eligible weights under the policy, with the fail-open rule (§16). */
  report(policy: EligibilityPolicy): WeightReport {
    if (policy.allowlist === null) {
      // Open (the usual case; finality asks once per block): every weight counts.
      const weights = new Map<string, bigint>();
      let total = 0n;
      for (const [rep, w] of this.weights) {
        if (w <= 0n) continue;
        weights.set(rep, w);
        total += w;
      }
      return { weights, ineligible: new Map(), total, ineligibleTotal: 0n, restricted: false, failedOpen: false };
    }
    const all = [...this.weights].filter(([, w]) => w > 0n);
    const allow = policy.allowlist ? new Set(policy.allowlist) : null;
    let eligible = allow ? all.filter(([rep]) => allow.has(rep)) : all;
    let failedOpen = false;
    if (allow && eligible.length === 0 && all.length > 0) {
      eligible = all;
      failedOpen = true;
    }
    const eligibleSet = new Set(eligible.map(([rep]) => rep));
    const ineligible = all.filter(([rep]) => !eligibleSet.has(rep));
    const sum = (xs: [string, bigint][]) => xs.reduce((s, [, w]) => s + w, 0n);
    return {
      weights: new Map(eligible),
      ineligible: new Map(ineligible),
      total: sum(eligible),
      ineligibleTotal: sum(ineligible),
      restricted: allow !== null,
      failedOpen,
    };
  }
}
