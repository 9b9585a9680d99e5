// Governance as of a ledger block (statechain.md §11): the per-key value history of the state
// chain kept in memory, and the views the ledger reads for a block with timestamp T.
import { isJsonObject, parseJson, type JsonValue } from '../codec/json.js';
import type { StatechainBlock } from '../service.js';
import { DEFAULT_ORACLE_PREFIX, DEFAULT_TOKENOMICS } from './rules.js';

/** An oracle epoch as the ledger reads it (leases.md §6). */
export interface Epoch {
  epoch: bigint;
  start_ns: bigint;
  r_effective: bigint;
  payout_cap: bigint;
  twap_milli_usd: bigint;
}

export interface GovernanceView {
  /** `sys.minter.keys` (account addresses); null when absent. */
  minters: string[] | null;
  /** `sys.timekeepers`; null when absent. */
  timekeepers: { keys: string[]; threshold: number } | null;
  /** `sys.tokenomics.stake_divisor`, default 5. */
  stakeDivisor: bigint;
  /** `sys.tokenomics.min_pow_difficulty`, default 0. */
  minPowDifficulty: bigint;
  /** Epoch candidates at time T: start_ns ≤ T, by epoch number descending, first 4 (leases.md §6). */
  epochCandidates(T: bigint): Epoch[];
  /** The as-of state is settled: the tip's timestamp is greater than T. */
  settled: boolean;
}

export const EPOCH_LOCK_CANDIDATES = 4;

interface HistoryEntry {
  index: number;
  value: string | null;
}

/** The parts of a view that depend only on the as-of block index. */
interface ViewCore {
  minters: string[] | null;
  timekeepers: { keys: string[]; threshold: number } | null;
  stakeDivisor: bigint;
  minPowDifficulty: bigint;
  /** Sorted by epoch number descending. */
  epochs: Epoch[];
}

const VIEW_CACHE_LIMIT = 256;

export class GovernanceHistory {
  private readonly timestamps: bigint[] = [];
  private readonly history = new Map<string, HistoryEntry[]>();
  private readonly cache = new Map<number, ViewCore>();

  /** Record an applied block (blocks arrive in index order, the genesis first). */
  record(block: StatechainBlock): void {
    const index = this.timestamps.length;
    if (BigInt(index) !== block.index) throw new Error(`governance history: expected index ${index}, got ${block.index}`);
    this.timestamps.push(block.timestamp);
    for (const op of block.ops) {
      const value = op.action === 'set' && op.value ? op.value.text : null;
      let entries = this.history.get(op.key);
      if (!entries) this.history.set(op.key, (entries = []));
      const last = entries[entries.length - 1];
      if (last && last.index === index) last.value = value;
      else entries.push({ index, value });
    }
  }

  /** Whether stored history rows are exactly the recorded history (boot check). */
  matches(rows: readonly { key: string; idx: bigint; timestamp: bigint; value: string | null }[]): boolean {
    let total = 0;
    for (const entries of this.history.values()) total += entries.length;
    if (rows.length !== total) return false;
    return rows.every((row) => {
      const index = Number(row.idx);
      const entry = this.history.get(row.key)?.find((e) => e.index === index);
      return entry !== undefined && entry.value === row.value && this.timestamps[index] === row.timestamp;
    });
  }

  asOf(T: bigint): GovernanceView {
    const tipTimestamp = this.timestamps[this.timestamps.length - 1] ?? 0n;
    const core = this.core(this.asOfIndex(T));
    return {
      minters: core.minters,
      timekeepers: core.timekeepers,
      stakeDivisor: core.stakeDivisor,
      minPowDifficulty: core.minPowDifficulty,
      epochCandidates: (at: bigint) => candidates(core.epochs, at),
      settled: tipTimestamp > T,
    };
  }

  /** The newest block with timestamp ≤ T (highest index among equals); the genesis when none. */
  private asOfIndex(T: bigint): number {
    let lo = 0;
    let hi = this.timestamps.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.timestamps[mid]! <= T) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private valueAt(key: string, index: number): string | null {
    const entries = this.history.get(key);
    if (!entries) return null;
    for (let i = entries.length - 1; i >= 0; i--) {
      if (entries[i]!.index <= index) return entries[i]!.value;
    }
    return null;
  }

  private core(index: number): ViewCore {
    const cached = this.cache.get(index);
    if (cached) return cached;
    const tokenomics = objectAt(this.valueAt('sys.tokenomics', index));
    const oracle = objectAt(this.valueAt('sys.oracle', index));
    const prefix = typeof oracle?.allowed_prefix === 'string' ? oracle.allowed_prefix : DEFAULT_ORACLE_PREFIX;
    const epochs: Epoch[] = [];
    for (const key of this.history.keys()) {
      if (!key.startsWith(prefix)) continue;
      const epoch = readEpoch(objectAt(this.valueAt(key, index)));
      if (epoch) epochs.push(epoch);
    }
    epochs.sort((a, b) => (a.epoch === b.epoch ? 0 : a.epoch > b.epoch ? -1 : 1));
    const timekeepers = objectAt(this.valueAt('sys.timekeepers', index));
    const core: ViewCore = {
      minters: stringList(objectAt(this.valueAt('sys.minter', index))?.keys),
      timekeepers:
        timekeepers && typeof timekeepers.threshold === 'bigint'
          ? { keys: stringList(timekeepers.keys) ?? [], threshold: Number(timekeepers.threshold) }
          : null,
      stakeDivisor: bigintOr(tokenomics?.stake_divisor, DEFAULT_TOKENOMICS.stake_divisor),
      minPowDifficulty: bigintOr(tokenomics?.min_pow_difficulty, DEFAULT_TOKENOMICS.min_pow_difficulty),
      epochs,
    };
    if (this.cache.size >= VIEW_CACHE_LIMIT) this.cache.clear();
    this.cache.set(index, core);
    return core;
  }
}

function candidates(epochs: Epoch[], T: bigint): Epoch[] {
  const out: Epoch[] = [];
  for (const e of epochs) {
    if (e.start_ns > T) continue;
    out.push(e);
    if (out.length === EPOCH_LOCK_CANDIDATES) break;
  }
  return out;
}

function objectAt(text: string | null): { [k: string]: JsonValue } | null {
  if (text === null) return null;
  try {
    const v = parseJson(text);
    return isJsonObject(v) ? v : null;
  } catch {
    return null;
  }
}

function stringList(v: JsonValue | undefined): string[] | null {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
}

function bigintOr(v: JsonValue | undefined, fallback: bigint): bigint {
  return typeof v === 'bigint' ? v : fallback;
}

/** Epochs written by DAO blocks before an oracle existed may be anything: unreadable ones are skipped. */
function readEpoch(v: { [k: string]: JsonValue } | null): Epoch | null {
  if (!v) return null;
  const { epoch, start_ns, r_effective, payout_cap, twap_milli_usd } = v;
  if (
    typeof epoch !== 'bigint' ||
    typeof start_ns !== 'bigint' ||
    typeof r_effective !== 'bigint' ||
    typeof payout_cap !== 'bigint' ||
    typeof twap_milli_usd !== 'bigint'
  ) {
    return null;
  }
  return { epoch, start_ns, r_effective, payout_cap, twap_milli_usd };
}
