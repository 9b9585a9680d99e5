// Op and key rules (statechain.md §5), system key schemas and transitions (§6, §7.1–§7.2, §8) and
// oracle epoch validation (§7.3). Every failure is a final rejection (LedgerError 'invalid').
import { invalid, type LedgerError } from '../errors.js';
import { isJsonObject, parseJson, RawJson, type JsonValue } from '../codec/json.js';
import { isLowerHex } from '../codec/hex.js';
import type { StatechainBlock } from '../service.js';
import type { StatechainOp } from './block.js';
import { U64_MAX, I64_MIN, I64_MAX } from '../codec/bytes.js';

export const KEY_MAX_CHARS = 128;
export const VALUE_MAX_BYTES = 65_536;
export const VALUE_MAX_DEPTH = 32;
export const BLOCK_MAX_BYTES = 262_144;
export const DEFAULT_ORACLE_PREFIX = 'epoch.';

const KEY_RE = /^[a-z0-9_.-]+$/;
const ACTION_NAME_RE = /^[a-z][a-z0-9_]{0,31}$/;
const NETWORK_ID_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const PREFIX_RE = /^[a-z0-9_.-]{1,64}$/;
const FEATURE_RE = /^[a-z][a-z0-9_]{0,31}$/;
const VERSION_RE = /^\d{1,4}\.\d{1,4}\.\d{1,4}$/;
const MIN_NOT_BEFORE_NS = 1_600_000_000_000_000_000n;
const MAX_FEATURES = 64;
const MAX_ALLOWLIST = 1000;

/** Read access to the KV: the raw stored text of a key, or null. */
export interface KvReader {
  get(key: string): string | null;
}

/** The KV before a block plus the block's ops applied so far (transition rules read it). */
export class KvOverlay implements KvReader {
  private readonly changes = new Map<string, string | null>();
  constructor(private readonly base: KvReader) {}

  get(key: string): string | null {
    return this.changes.has(key) ? this.changes.get(key)! : this.base.get(key);
  }

  apply(op: StatechainOp): void {
    this.changes.set(op.key, op.action === 'set' && op.value ? op.value.text : null);
  }
}

/** The tip a block is appended to (null for the genesis): activation freezing reads it. */
export interface PrevTip {
  index: bigint;
  timestamp: bigint;
}

export function opError(key: string, rule: string): LedgerError {
  return invalid(`op key "${key}": ${rule}`);
}

/** Parsed JSON of a stored value (only ever called on text that passed the value rules). */
export function parseStored(text: string): JsonValue {
  return parseJson(text);
}

/**
 * Op rules (§5) and transition rules (§6) for every op in order, each against the KV as left by
 * the ops before it. Returns the overlay holding the block's effect.
 */
export function checkOps(block: StatechainBlock, kvBefore: KvReader, prev: PrevTip | null): KvOverlay {
  const overlay = new KvOverlay(kvBefore);
  block.ops.forEach((op, i) => {
    const parsed = checkOp(op, i);
    if (op.key.startsWith('sys.') && parsed !== undefined) {
      checkSysValue(op.key, parsed, overlay, block, prev);
    }
    overlay.apply(op);
  });
  return overlay;
}

/** Key rules first (naming the op by position), then action and value rules. Returns the parsed value of a set. */
export function checkOp(op: StatechainOp, i: number): JsonValue | undefined {
  checkKey(op.key, i);
  const key = op.key;
  const action: string = op.action;
  if (action !== 'set' && action !== 'delete') {
    throw opError(key, ACTION_NAME_RE.test(action) ? `unknown action "${action}"` : 'unknown action');
  }
  if (action === 'delete') {
    if (key.startsWith('sys.')) throw opError(key, 'cannot delete sys.* keys');
    return undefined;
  }
  const text = op.value?.text ?? '';
  // A JSON null counts as absent (README.md "JSON"); raw text never carries surrounding whitespace.
  if (text === '' || text === 'null') throw opError(key, 'set op must have a value');
  if (Buffer.byteLength(text, 'utf8') > VALUE_MAX_BYTES) throw opError(key, `value exceeds ${VALUE_MAX_BYTES} bytes`);
  const raw = reparse(text);
  if (!raw) throw opError(key, 'value is not valid JSON');
  if (raw.hasDuplicateKey) throw opError(key, 'value has a duplicate object key');
  if (raw.depth > VALUE_MAX_DEPTH) throw opError(key, `value nests deeper than ${VALUE_MAX_DEPTH} levels`);
  return raw.value;
}

export function checkKey(key: string, i: number): void {
  if (key === '') throw invalid(`op ${i}: key is empty`);
  if ([...key].length > KEY_MAX_CHARS) throw invalid(`op ${i}: key exceeds ${KEY_MAX_CHARS} characters`);
  if (!KEY_RE.test(key)) throw invalid(`op ${i}: key contains invalid characters (must be [a-z0-9_.-])`);
  if (key === '.' || key === '..') throw invalid(`op ${i}: key must not be a dot segment`);
}

/**
 * Re-read the value text on its own, so the checks never trust flags of a RawJson built elsewhere:
 * exactly one JSON value, nothing around it. Null when the text is not valid JSON.
 */
function reparse(text: string): RawJson | null {
  let wrapped: JsonValue;
  try {
    wrapped = parseJson(`[${text}]`, { raw: (p) => p.length === 1 });
  } catch {
    return null;
  }
  if (!Array.isArray(wrapped) || wrapped.length !== 1) return null;
  const raw = wrapped[0];
  return raw instanceof RawJson && raw.text === text ? raw : null;
}

// ---------------------------------------------------------------------------------------------
// System key schemas (§6). Messages name the schema's own fields, never submitted text.

/** Strict-schema reader over one object value; every error is `op key "<key>": <prefix><rule>`. */
class Schema {
  constructor(
    private readonly key: string,
    private readonly obj: { [k: string]: JsonValue },
    private readonly prefix = '',
  ) {}

  static object(key: string, v: JsonValue, fields: readonly string[], prefix = ''): Schema {
    if (!isJsonObject(v)) throw opError(key, `${prefix}value must be an object`);
    for (const name of Object.keys(v)) {
      if (!fields.includes(name)) throw opError(key, `${prefix}unknown field`);
    }
    return new Schema(key, v, prefix);
  }

  fail(rule: string): LedgerError {
    return opError(this.key, this.prefix + rule);
  }

  /** An integer literal within `min…max`; absent → `fallback`, or an error when there is none. */
  int(field: string, min: bigint, max: bigint, fallback?: bigint): bigint {
    const v = this.obj[field];
    if (v === undefined) {
      if (fallback === undefined) throw this.fail(`${field} is required`);
      return fallback;
    }
    if (typeof v !== 'bigint') throw this.fail(`${field} must be an integer literal`);
    if (v < min || v > max) throw this.fail(`${field} is out of range`);
    return v;
  }

  u64(field: string, fallback?: bigint): bigint {
    return this.int(field, 0n, U64_MAX, fallback);
  }

  i64(field: string): bigint {
    return this.int(field, I64_MIN, I64_MAX);
  }

  str(field: string): string {
    const v = this.obj[field];
    if (v === undefined) throw this.fail(`${field} is required`);
    if (typeof v !== 'string') throw this.fail(`${field} must be a string`);
    return v;
  }

  bool(field: string): void {
    const v = this.obj[field];
    if (v !== undefined && typeof v !== 'boolean') throw this.fail(`${field} must be a boolean`);
  }

  /** A list of unique 64-lowercase-hex strings with `min…max` entries. */
  hexList(field: string, min: number, max: number): string[] {
    const v = this.obj[field];
    if (v === undefined) throw this.fail(`${field} is required`);
    if (!Array.isArray(v)) throw this.fail(`${field} must be an array`);
    if (v.length < min) throw this.fail(`${field} must have at least ${min} ${min === 1 ? 'entry' : 'entries'}`);
    if (v.length > max) throw this.fail(`${field} must have at most ${max} entries`);
    const seen = new Set<string>();
    for (const item of v) {
      if (!isLowerHex(item, 64)) throw this.fail(`${field} entries must be 64 lowercase hex characters`);
      if (seen.has(item)) throw this.fail(`${field} entries must be unique`);
      seen.add(item);
    }
    return [...seen];
  }

  /** `{keys, threshold}` with at least `minKeys` keys and `minThreshold ≤ threshold ≤ keys`. */
  keyset(minKeys: number, minThreshold: bigint): { keys: string[]; threshold: number } {
    const keys = this.hexList('keys', minKeys, Number.MAX_SAFE_INTEGER);
    const threshold = this.u64('threshold');
    if (threshold < minThreshold) throw this.fail(`threshold must be at least ${minThreshold}`);
    if (threshold > BigInt(keys.length)) throw this.fail('threshold must not exceed the number of keys');
    return { keys, threshold: Number(threshold) };
  }
}

function checkSysValue(key: string, v: JsonValue, kv: KvReader, block: StatechainBlock, prev: PrevTip | null): void {
  switch (key) {
    case 'sys.dao_keyset':
      Schema.object(key, v, ['keys', 'threshold']).keyset(2, 2n);
      return;
    case 'sys.network_id':
      if (prev !== null) throw opError(key, 'network id is fixed by the genesis');
      if (typeof v !== 'string' || !NETWORK_ID_RE.test(v)) {
        throw opError(key, 'network id must be 1-64 characters of [a-z0-9_.-] starting with a letter or digit');
      }
      return;
    case 'sys.timekeepers':
      Schema.object(key, v, ['keys', 'threshold']).keyset(1, 1n);
      return;
    case 'sys.oracle':
      return checkOracle(key, v, kv);
    case 'sys.minter':
      Schema.object(key, v, ['keys']).hexList('keys', 1, Number.MAX_SAFE_INTEGER);
      return;
    case 'sys.phase': {
      if (typeof v !== 'bigint') throw opError(key, 'phase must be an integer literal');
      if (v !== 1n && v !== 2n) throw opError(key, 'phase must be 1 or 2');
      const old = currentPhase(kv);
      if (v < old) throw opError(key, `phase may not decrease: ${old} -> ${v}`);
      return;
    }
    case 'sys.tokenomics':
      checkTokenomics(key, v);
      return;
    case 'sys.activations':
      return checkActivations(key, v, kv, block, prev);
    case 'sys.min_protocol_version': {
      if (typeof v !== 'string' || !VERSION_RE.test(v)) throw opError(key, 'version must be "M.m.p"');
      const old = kv.get(key);
      if (old !== null && compareVersions(v, parseStored(old) as string) < 0) {
        throw opError(key, 'min_protocol_version may not decrease');
      }
      return;
    }
    case 'sys.representatives':
      return checkRepresentatives(key, v);
    default:
      return; // other sys.* keys: any valid JSON (§6)
  }
}

function checkOracle(key: string, v: JsonValue, kv: KvReader): void {
  const s = Schema.object(key, v, ['keys', 'threshold', 'allowed_prefix']);
  s.keyset(1, 1n);
  const prefix = s.str('allowed_prefix');
  if (!PREFIX_RE.test(prefix) || !prefix.endsWith('.') || prefix.startsWith('sys.')) {
    throw s.fail('allowed_prefix must be 1-64 characters of [a-z0-9_.-], end with "." and not start with "sys."');
  }
  const old = oraclePolicy(kv);
  if (old && old.prefix !== prefix) throw s.fail('allowed_prefix is fixed once set');
}

function checkRepresentatives(key: string, v: JsonValue): void {
  if (!isJsonObject(v)) throw opError(key, 'value must be an object');
  if (v.mode === 'open') {
    Schema.object(key, v, ['mode']);
    return;
  }
  if (v.mode === 'allowlist') {
    Schema.object(key, v, ['mode', 'addresses']).hexList('addresses', 1, MAX_ALLOWLIST);
    return;
  }
  throw opError(key, 'mode must be "open" or "allowlist"');
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Tokenomics (§7.1, §7.2)

export interface Tokenomics {
  r_init: bigint;
  r_floor: bigint;
  v_half: bigint;
  price_tier_1: bigint;
  price_tier_2: bigint;
  price_tier_3: bigint;
  r_price_floor_tier_1: bigint;
  r_price_floor_tier_2: bigint;
  r_collusion_factor_milli: bigint;
  hermite_fdv_min_usd: bigint;
  hermite_fdv_max_usd: bigint;
  hermite_ceiling_milli: bigint;
  hermite_floor_milli: bigint;
  stake_divisor: bigint;
  min_pow_difficulty: bigint;
}

export const DEFAULT_TOKENOMICS: Readonly<Tokenomics> = Object.freeze({
  r_init: 2000n,
  r_floor: 100n,
  v_half: 500_000_000n,
  price_tier_1: 500n,
  price_tier_2: 1010n,
  price_tier_3: 10000n,
  r_price_floor_tier_1: 2000n,
  r_price_floor_tier_2: 1250n,
  r_collusion_factor_milli: 950n,
  hermite_fdv_min_usd: 5_000_000n,
  hermite_fdv_max_usd: 1_000_000_000n,
  hermite_ceiling_milli: 1550n,
  hermite_floor_milli: 1120n,
  stake_divisor: 5n,
  min_pow_difficulty: 0n,
});

const TOKENOMICS_FIELDS = Object.keys(DEFAULT_TOKENOMICS) as (keyof Tokenomics)[];
const OPTIONAL_TOKENOMICS = new Set<keyof Tokenomics>(['stake_divisor', 'min_pow_difficulty']);

/** Validate a `sys.tokenomics` value and return it with defaults filled in. */
export function checkTokenomics(key: string, v: JsonValue): Tokenomics {
  const s = Schema.object(key, v, TOKENOMICS_FIELDS);
  const t = {} as Tokenomics;
  for (const f of TOKENOMICS_FIELDS) {
    t[f] = OPTIONAL_TOKENOMICS.has(f) ? s.u64(f, DEFAULT_TOKENOMICS[f]) : s.u64(f);
  }
  if (t.r_floor <= 0n) throw s.fail('r_floor must be positive');
  if (t.r_init <= t.r_floor) throw s.fail('r_init must exceed r_floor');
  if (t.v_half <= 0n) throw s.fail('v_half must be positive');
  if (!(t.price_tier_1 < t.price_tier_2 && t.price_tier_2 < t.price_tier_3)) {
    throw s.fail('price tiers must increase: price_tier_1 < price_tier_2 < price_tier_3');
  }
  if (!(t.r_price_floor_tier_1 >= t.r_price_floor_tier_2 && t.r_price_floor_tier_2 >= t.r_floor)) {
    throw s.fail('R price floors must satisfy r_price_floor_tier_1 >= r_price_floor_tier_2 >= r_floor');
  }
  if (t.r_collusion_factor_milli <= 0n || t.r_collusion_factor_milli >= 1000n) {
    throw s.fail('r_collusion_factor_milli must be between 1 and 999');
  }
  if (t.hermite_fdv_min_usd <= 0n || t.hermite_fdv_min_usd >= t.hermite_fdv_max_usd) {
    throw s.fail('hermite_fdv_min_usd must be positive and below hermite_fdv_max_usd');
  }
  if (t.hermite_floor_milli <= 0n) throw s.fail('hermite_floor_milli must be positive');
  if (t.hermite_ceiling_milli <= t.hermite_floor_milli) throw s.fail('hermite_ceiling_milli must exceed hermite_floor_milli');
  for (const f of ['r_init', 'r_floor', 'r_price_floor_tier_1', 'r_price_floor_tier_2'] as const) {
    if (t[f] < 1n || t[f] > 100_000n) throw s.fail(`${f} must be within [1, 100000]`);
  }
  if (t.stake_divisor < 1n || t.stake_divisor > 1_000_000n) throw s.fail('stake_divisor must be within [1, 1000000]');
  return t;
}

// ---------------------------------------------------------------------------------------------
// Activations (§8)

interface Trigger {
  at_index: bigint;
  not_before_ns: bigint;
}

function parseActivations(key: string, v: JsonValue): Map<string, Trigger> {
  const s = Schema.object(key, v, ['features']);
  const features = (v as { features?: JsonValue }).features;
  if (features === undefined) throw s.fail('features is required');
  if (!isJsonObject(features)) throw s.fail('features must be an object');
  const names = Object.keys(features);
  if (names.length > MAX_FEATURES) throw s.fail(`features must have at most ${MAX_FEATURES} entries`);
  const out = new Map<string, Trigger>();
  for (const name of names) {
    if (!FEATURE_RE.test(name)) throw s.fail('feature names must match ^[a-z][a-z0-9_]{0,31}$');
    const f = Schema.object(key, features[name]!, ['at_index', 'not_before_ns'], 'feature: ');
    const at_index = f.u64('at_index');
    const not_before_ns = f.i64('not_before_ns');
    if (at_index === 0n && not_before_ns === 0n) throw f.fail('at least one of at_index and not_before_ns must be non-zero');
    if (not_before_ns < 0n || (not_before_ns !== 0n && not_before_ns < MIN_NOT_BEFORE_NS)) {
      throw f.fail(`not_before_ns must be 0 or at least ${MIN_NOT_BEFORE_NS}`);
    }
    out.set(name, { at_index, not_before_ns });
  }
  return out;
}

function isActive(t: Trigger, tip: PrevTip): boolean {
  return tip.index >= t.at_index && tip.timestamp >= t.not_before_ns;
}

function checkActivations(key: string, v: JsonValue, kv: KvReader, block: StatechainBlock, prev: PrevTip | null): void {
  const next = parseActivations(key, v);
  const oldText = kv.get(key);
  const old = oldText === null ? new Map<string, Trigger>() : parseActivations(key, parseStored(oldText));
  for (const name of old.keys()) {
    if (!next.has(name)) throw opError(key, 'features may not be removed');
  }
  for (const [name, t] of next) {
    const before = old.get(name);
    if (before && before.at_index === t.at_index && before.not_before_ns === t.not_before_ns) continue;
    if (before && prev && isActive(before, prev)) throw opError(key, 'an active feature is frozen');
    if ((t.at_index !== 0n && t.at_index <= block.index) || (t.not_before_ns !== 0n && t.not_before_ns <= block.timestamp)) {
      throw opError(key, 'a new or changed trigger must lie in the future');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Readers of stored system values (validated when written).

export interface OracleConfig {
  keys: string[];
  threshold: number;
  prefix: string;
}

export function oraclePolicy(kv: KvReader): OracleConfig | null {
  const text = kv.get('sys.oracle');
  if (text === null) return null;
  const v = parseStored(text) as { keys: string[]; threshold: bigint; allowed_prefix: string };
  return { keys: v.keys, threshold: Number(v.threshold), prefix: v.allowed_prefix };
}

export function readKeyset(text: string): { keys: string[]; threshold: number } {
  const v = parseStored(text) as { keys: string[]; threshold: bigint };
  return { keys: [...v.keys], threshold: Number(v.threshold) };
}

export function currentPhase(kv: KvReader): bigint {
  const text = kv.get('sys.phase');
  return text === null ? 1n : (parseStored(text) as bigint);
}

export function currentTokenomics(kv: KvReader): Tokenomics | null {
  const text = kv.get('sys.tokenomics');
  return text === null ? null : checkTokenomics('sys.tokenomics', parseStored(text));
}

// ---------------------------------------------------------------------------------------------
// Oracle epoch values (§7.3)

const EPOCH_FIELDS = [
  'epoch', 'start_ns', 'end_ns', 'twap_milli_usd', 'twav_milli_usd', 'r_volume', 'r_price_floor',
  'r_collusion', 'r_effective', 'r_source', 'phase', 's_milli', 'volume_trigger_met',
  'twap_trigger_met', 'payout_cap',
] as const;
const R_SOURCES = ['volume', 'price_floor', 'tied', 'collusion'];

/** Validate an oracle-written epoch value against the KV before its block. */
export function checkEpochValue(key: string, prefix: string, v: JsonValue, kv: KvReader): void {
  const s = Schema.object(key, v, EPOCH_FIELDS, 'invalid epoch: ');
  const epoch = s.u64('epoch');
  const start = s.i64('start_ns');
  const end = s.i64('end_ns');
  const twap = s.u64('twap_milli_usd');
  s.u64('twav_milli_usd');
  const rVolume = s.u64('r_volume');
  const rFloor = s.u64('r_price_floor');
  const rCollusion = s.u64('r_collusion', 0n);
  const rEffective = s.u64('r_effective');
  const source = s.str('r_source');
  const phase = s.u64('phase');
  const sMilli = s.u64('s_milli', 0n);
  s.bool('volume_trigger_met');
  s.bool('twap_trigger_met');
  const cap = s.u64('payout_cap');

  if (key !== `${prefix}${epoch}`) throw s.fail(`epoch key must be "${prefix}${epoch}"`);
  if (end <= start) throw s.fail('end_ns must be after start_ns');
  const current = currentPhase(kv);
  if ((phase !== 1n && phase !== 2n) || phase !== current) throw s.fail(`phase must equal the current sys.phase (${current})`);
  const t = currentTokenomics(kv);
  const [capFloor, capCeiling] = t ? [t.hermite_floor_milli, t.hermite_ceiling_milli] : [1000n, 2000n];
  if (cap !== 0n && (cap < capFloor || cap > capCeiling)) {
    throw s.fail(`payout_cap must be 0 or within [${capFloor}, ${capCeiling}]`);
  }
  const wantS = phase === 1n ? 0n : 300n;
  if (sMilli !== wantS) throw s.fail(`s_milli must be ${wantS} in phase ${phase}`);
  if (rCollusion !== 0n) {
    const factor = t ? t.r_collusion_factor_milli : DEFAULT_TOKENOMICS.r_collusion_factor_milli;
    const want = twap === 0n ? 0n : (factor * (1000n - sMilli)) / twap;
    if (rCollusion !== want) throw s.fail(`r_collusion must be ${want}`);
  }
  const best = rVolume > rFloor ? rVolume : rFloor;
  const wantR = rCollusion !== 0n && rCollusion < best ? rCollusion : best;
  if (rEffective !== wantR) throw s.fail(`r_effective must be ${wantR}`);
  const collusionBelow = rCollusion !== 0n && rCollusion < best;
  const consistent =
    (source === 'volume' && rVolume > rFloor && !collusionBelow) ||
    (source === 'price_floor' && rFloor > rVolume && !collusionBelow) ||
    (source === 'tied' && rVolume === rFloor) ||
    (source === 'collusion' && collusionBelow);
  if (!R_SOURCES.includes(source)) throw s.fail('r_source must be volume, price_floor, tied or collusion');
  if (!consistent) throw s.fail('r_source is inconsistent with the R candidates');
}
