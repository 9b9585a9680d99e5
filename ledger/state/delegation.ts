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

  /** Eligible weights under the policy, with the fail-open rule (§16). One pass: finality asks once per block. */
  report(policy: EligibilityPolicy): WeightReport {
    const allow = policy.allowlist ? new Set(policy.allowlist) : null;
    const weights = new Map<string, bigint>();
    const ineligible = new Map<string, bigint>();
    let total = 0n;
    let ineligibleTotal = 0n;
    for (const [rep, w] of this.weights) {
      if (w <= 0n) continue;
      if (allow === null || allow.has(rep)) {
        weights.set(rep, w);
        total += w;
      } else {
        ineligible.set(rep, w);
        ineligibleTotal += w;
      }
    }
    // Fail open: an allowlist that leaves no weight eligible while some exists counts every weight.
    if (allow !== null && weights.size === 0 && ineligible.size > 0) {
      return { weights: ineligible, ineligible: new Map(), total: ineligibleTotal, ineligibleTotal: 0n, restricted: true, failedOpen: true };
    }
    return { weights, ineligible, total, ineligibleTotal, restricted: allow !== null, failedOpen: false };
  }
}
