// Block JSON ↔ Block, intake (ledger.md §4, §11 steps 1–3), canonical bytes (§5), aux (§6), hash (§7.1)
// and the intrinsic verify step (§7.4).
import { hash } from 'node:crypto';
import {
  TYPE_BYTE,
  emptyBlock,
  isBlockType,
  type Attestation,
  type Block,
  type BlockType,
  type Keyset,
  type SignatureEntry,
} from '../types.js';
import { LedgerError, invalid } from '../errors.js';
import { isJsonObject, stringifyJson, type JsonValue } from './json.js';
import { isLowerHex } from './hex.js';
import { ByteWriter, U64_MAX, I64_MIN, I64_MAX } from './bytes.js';
import { accountAddress } from '../crypto/address.js';
import { verifyHashSignature } from '../crypto/ed25519.js';

/** A body field of the wrong JSON type or out of range; answered as `invalid request body`. */
export class BodyShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BodyShapeError';
  }
}

export const BLOCK_VERSION = 0x02;
export const MAX_ATTESTATIONS = 20;
export const MAX_MEMO_BYTES = 64;

const U32_MAX = 0xffff_ffffn;
const TYPE_NAME_RE = /^[a-z][a-z0-9_]{0,31}$/;

// ---------------------------------------------------------------------------------------------
// Field catalogue

type StringField =
  | 'account' | 'previous' | 'asset' | 'representative' | 'destination' | 'source' | 'access_pub_key'
  | 'memo' | 'pub_key' | 'signature' | 'hash' | 'certificate_hash';
type U64Field =
  | 'balance' | 'amount' | 'vcpus' | 'memory_mb' | 'disk_gb' | 'duration' | 'pow_nonce' | 'locked_r'
  | 'locked_payout_cap' | 'locked_twap_milli' | 'lease_min_duration_secs';
type I64Field =
  | 'timestamp' | 'lease_settle_grace_ns' | 'lease_force_settle_gap_ns' | 'lease_escrow_expiry_ns'
  | 'lease_archive_gap_ns' | 'max_attestation_skew_ns';
type BlockField = Exclude<keyof Block, 'type'>;

const STRING_FIELDS: readonly StringField[] = [
  'account', 'previous', 'asset', 'representative', 'destination', 'source', 'access_pub_key', 'memo',
  'pub_key', 'signature', 'hash', 'certificate_hash',
];
const U64_FIELDS: readonly U64Field[] = [
  'balance', 'amount', 'vcpus', 'memory_mb', 'disk_gb', 'duration', 'pow_nonce', 'locked_r',
  'locked_payout_cap', 'locked_twap_milli', 'lease_min_duration_secs',
];
const I64_FIELDS: readonly I64Field[] = [
  'timestamp', 'lease_settle_grace_ns', 'lease_force_settle_gap_ns', 'lease_escrow_expiry_ns',
  'lease_archive_gap_ns', 'max_attestation_skew_ns',
];
const TIMING_FIELDS = [
  'lease_min_duration_secs', 'lease_settle_grace_ns', 'lease_force_settle_gap_ns', 'lease_escrow_expiry_ns',
  'lease_archive_gap_ns', 'max_attestation_skew_ns',
] as const;

/** Every key in the order a node emits it (§3). */
const EMISSION_ORDER: readonly (keyof Block)[] = [
  'type', 'account', 'previous', 'balance', 'timestamp', 'asset', 'representative', 'destination', 'amount',
  'source', 'vcpus', 'memory_mb', 'disk_gb', 'duration', 'access_pub_key', ...TIMING_FIELDS, 'memo', 'keyset',
  'signatures', 'pub_key', 'signature', 'hash', 'pow_nonce', 'attestations', 'certificate_hash', 'locked_r',
  'locked_payout_cap', 'locked_twap_milli',
];

const LEASE_SECTION_TYPES: ReadonlySet<BlockType> = new Set([
  'lease', 'lease_accept', 'lease_settle', 'lease_force_settle', 'lease_renew',
]);
const OPENING_KEY_TYPES: ReadonlySet<BlockType> = new Set(['receive', 'mint', 'genesis']);

/** Type-specific fields of §3.1 (both columns). */
const TYPE_FIELDS: Readonly<Record<BlockType, readonly BlockField[]>> = {
  send: ['destination', 'amount', 'memo'],
  receive: ['source'],
  burn: ['amount', 'memo'],
  mint: ['amount'],
  lease: ['destination', 'amount', 'vcpus', 'memory_mb', 'disk_gb', 'duration', 'access_pub_key', 'certificate_hash'],
  lease_accept: ['source', 'amount', 'attestations', 'certificate_hash', 'locked_r', 'locked_payout_cap', 'locked_twap_milli'],
  lease_settle: ['source', 'amount', 'attestations', 'certificate_hash'],
  lease_cancel: ['source'],
  lease_force_settle: ['source', 'attestations', 'certificate_hash'],
  lease_renew: [
    'source', 'amount', 'duration', 'attestations', 'certificate_hash', 'locked_r', 'locked_payout_cap',
    'locked_twap_milli',
  ],
  multisig_open: ['keyset'],
  multisig_update: ['keyset'],
  genesis: [...TIMING_FIELDS],
};

interface Shape {
  /** Applicable keys in emission order. */
  ordered: readonly string[];
  keys: ReadonlySet<string>;
}

/** type → shapes indexed by (multisig ? 2 : 0) + (opening ? 1 : 0). */
const shapeCache = new Map<BlockType, Shape[]>();

function shapeOf(type: BlockType, multisig: boolean, opening: boolean): Shape {
  let shapes = shapeCache.get(type);
  if (!shapes) shapeCache.set(type, (shapes = []));
  const index = (multisig ? 2 : 0) + (opening ? 1 : 0);
  const hit = shapes[index];
  if (hit) return hit;
  const set = new Set<string>([
    'type', 'account', 'previous', 'balance', 'timestamp', 'asset', 'representative', 'hash',
    ...TYPE_FIELDS[type],
  ]);
  set.add(multisig ? 'signatures' : 'signature');
  if (type !== 'genesis') set.add('pow_nonce');
  if (!multisig && opening && OPENING_KEY_TYPES.has(type)) set.add('pub_key');
  const shape = { ordered: EMISSION_ORDER.filter((k) => set.has(k)), keys: set };
  shapes[index] = shape;
  return shape;
}

/** The keys a block of this shape carries, in emission order (§3, §3.1). */
export function applicableFields(type: BlockType, multisig: boolean, opening: boolean): readonly string[] {
  return shapeOf(type, multisig, opening).ordered;
}

function isMultisig(b: Block): boolean {
  return b.signatures !== null;
}

// ---------------------------------------------------------------------------------------------
// JSON → Block

function member(obj: { [key: string]: JsonValue }, key: string): JsonValue | undefined {
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return undefined;
  const v = obj[key];
  return v === null ? undefined : v;
}

function readString(obj: { [key: string]: JsonValue }, key: string, where: string): string {
  const v = member(obj, key);
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new BodyShapeError(`${where} must be a string`);
  return v;
}

function readInt(obj: { [key: string]: JsonValue }, key: string, where: string, min: bigint, max: bigint): bigint {
  const v = member(obj, key);
  if (v === undefined) return 0n;
  if (typeof v !== 'bigint' || v < min || v > max) throw new BodyShapeError(`${where} must be an integer in range`);
  return v;
}

function readArray(obj: { [key: string]: JsonValue }, key: string): JsonValue[] | undefined {
  const v = member(obj, key);
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw new BodyShapeError(`${key} must be an array`);
  return v;
}

function readObject(v: JsonValue, where: string): { [key: string]: JsonValue } {
  if (!isJsonObject(v)) throw new BodyShapeError(`${where} must be an object`);
  return v;
}

function parseKeyset(v: JsonValue): Keyset {
  const obj = readObject(v, 'keyset');
  const keys = (readArray(obj, 'keys') ?? []).map((k, i) => {
    if (typeof k !== 'string') throw new BodyShapeError(`keyset.keys[${i}] must be a string`);
    return k;
  });
  const threshold = Number(readInt(obj, 'threshold', 'keyset.threshold', 0n, U32_MAX));
  return { keys, threshold };
}

function parseSignatures(items: JsonValue[]): SignatureEntry[] {
  return items.map((item, i) => {
    const obj = readObject(item, `signatures[${i}]`);
    return {
      public_key: readString(obj, 'public_key', `signatures[${i}].public_key`),
      signature: readString(obj, 'signature', `signatures[${i}].signature`),
    };
  });
}

/** One attestation object (`{public_key, timestamp, signature}`); BodyShapeError on shape problems. */
export function parseAttestationJson(item: JsonValue, where = 'attestation'): Attestation {
  const obj = readObject(item, where);
  return {
    public_key: readString(obj, 'public_key', `${where}.public_key`),
    timestamp: readInt(obj, 'timestamp', `${where}.timestamp`, I64_MIN, I64_MAX),
    signature: readString(obj, 'signature', `${where}.signature`),
  };
}

/**
 * Structural decode of one block JSON object (BodyShapeError on a wrong JSON type or range), then
 * §11 step 1 on its `type`. A `signatures` array, even empty, makes the block multisig.
 */
export function parseBlockJson(json: JsonValue): Block {
  if (!isJsonObject(json)) throw new BodyShapeError('block must be a JSON object');
  const strings: Partial<Record<StringField, string>> = {};
  // Shapes first (a malformed body is `invalid request body` whatever its type), then §11 step 1.
  for (const f of STRING_FIELDS) strings[f] = readString(json, f, f);
  const ints: Partial<Record<U64Field | I64Field, bigint>> = {};
  for (const f of U64_FIELDS) ints[f] = readInt(json, f, f, 0n, U64_MAX);
  for (const f of I64_FIELDS) ints[f] = readInt(json, f, f, I64_MIN, I64_MAX);
  const keysetJson = member(json, 'keyset');
  const keyset = keysetJson === undefined ? null : parseKeyset(keysetJson);
  const sigItems = readArray(json, 'signatures');
  const signatures = sigItems === undefined ? null : parseSignatures(sigItems);
  const attestations = (readArray(json, 'attestations') ?? []).map((a, i) =>
    parseAttestationJson(a, `attestations[${i}]`),
  );

  const typeValue = member(json, 'type');
  if (typeof typeValue !== 'string') throw invalid('invalid block type');
  if (!isBlockType(typeValue)) {
    if (TYPE_NAME_RE.test(typeValue)) throw new LedgerError('unknown_type', `unknown block type: ${typeValue}`);
    throw invalid('invalid block type');
  }
  return { ...emptyBlock(typeValue), ...strings, ...ints, keyset, signatures, attestations };
}

// ---------------------------------------------------------------------------------------------
// Intake (§4, §11 steps 2–3)

function isZero(v: Block[keyof Block]): boolean {
  if (v === null || v === '' || v === 0n) return true;
  return Array.isArray(v) && v.length === 0;
}

/** Non-applicable fields that a type's own §12 rule names, with the message it answers. */
function namedFieldRejection(b: Block): string | undefined {
  if (b.type === 'mint') {
    if (b.destination !== '' || b.source !== '') return 'mint: must not have source or destination';
    if (b.memo !== '') return 'mint: memo not allowed';
  }
  if (b.type === 'burn' && (b.destination !== '' || b.source !== '')) {
    return 'burn: must not have source or destination';
  }
  return undefined;
}

function checkHex(value: string, field: string, n: number, required = false): void {
  if (value === '' && !required) return;
  if (!isLowerHex(value, n)) throw invalid(`invalid ${field}: must be ${n} lowercase hex characters`);
}

/**
 * The intake copy (§4): non-applicable fields dropped (or rejected when the type's rules name them),
 * every remaining hex field shape-checked, then the attestation count and duplicate keys (§11 step 3).
 * `pub_key` is never dropped here; §7.2 judges it in the verify step.
 */
export function intakeBlock(block: Block): Block {
  const named = namedFieldRejection(block);
  if (named) throw invalid(named);

  const applies = shapeOf(block.type, isMultisig(block), block.previous === '0').keys;
  const b: Block = { ...block };
  let zero: Block | undefined;
  for (const key of EMISSION_ORDER) {
    if (key === 'type' || key === 'signatures' || key === 'pub_key' || applies.has(key)) continue;
    if (!isZero(b[key])) (b as unknown as Record<string, unknown>)[key] = (zero ??= emptyBlock(block.type))[key];
  }
  b.keyset = b.keyset && { keys: [...b.keyset.keys], threshold: b.keyset.threshold };
  b.signatures = b.signatures && b.signatures.map((s) => ({ ...s }));
  b.attestations = b.attestations.map((a) => ({ ...a }));

  checkHex(b.account, 'account', 64, true);
  if (b.previous !== '0') checkHex(b.previous, 'previous', 64, true);
  checkHex(b.representative, 'representative', 64);
  checkHex(b.destination, 'destination', 64);
  checkHex(b.source, 'source', 64);
  checkHex(b.access_pub_key, 'access_pub_key', 64);
  b.keyset?.keys.forEach((k, i) => checkHex(k, `keyset.keys[${i}]`, 64, true));
  b.signatures?.forEach((s, i) => {
    checkHex(s.public_key, `signatures[${i}].public_key`, 64, true);
    checkHex(s.signature, `signatures[${i}].signature`, 128, true);
  });
  checkHex(b.pub_key, 'pub_key', 64);
  checkHex(b.signature, 'signature', 128);
  checkHex(b.hash, 'hash', 64, true);
  b.attestations.forEach((a, i) => {
    checkHex(a.public_key, `attestations[${i}].public_key`, 64, true);
    checkHex(a.signature, `attestations[${i}].signature`, 128, true);
  });
  checkHex(b.certificate_hash, 'certificate_hash', 64);

  if (b.attestations.length > MAX_ATTESTATIONS) {
    throw invalid(`too many attestations: ${b.attestations.length} exceeds max ${MAX_ATTESTATIONS}`);
  }
  const seen = new Set<string>();
  for (const a of b.attestations) {
    if (seen.has(a.public_key)) throw invalid(`duplicate attestation key ${a.public_key.slice(0, 12)}`);
    seen.add(a.public_key);
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// Canonical bytes (§5) and aux (§6)

const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The memo rule a memo breaks (§5.2), without prefix, or undefined when it is valid. */
export function memoError(memo: string): string | undefined {
  const bytes = Buffer.from(memo, 'utf8');
  if (bytes.length > MAX_MEMO_BYTES) return `memo too long: ${bytes.length} bytes (max ${MAX_MEMO_BYTES})`;
  if (LONE_SURROGATE_RE.test(memo)) return 'memo is not valid UTF-8';
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || c === 0x7f) {
      return `memo contains disallowed control byte 0x${c.toString(16).padStart(2, '0')} at offset ${i}`;
    }
  }
  return undefined;
}

class EncodeError extends Error {}

function raw32(w: ByteWriter, value: string, field: string): void {
  if (value === '') {
    w.zeros(32);
    return;
  }
  if (!isLowerHex(value, 64)) throw new EncodeError(`${field} must be 32 bytes of hex`);
  w.rawHex(value);
}

function encode(b: Block): Uint8Array {
  const w = new ByteWriter(256);
  w.u8(BLOCK_VERSION).u8(TYPE_BYTE[b.type]);
  const asset = Buffer.from(b.asset, 'utf8');
  if (asset.length > 8) throw new EncodeError(`asset too long: ${asset.length} bytes (max 8)`);
  w.bytes(asset).zeros(8 - asset.length);
  if (!isLowerHex(b.account, 64)) throw new EncodeError('account must be 32 bytes of hex');
  w.rawHex(b.account);
  if (b.previous === '0') w.zeros(32);
  else if (isLowerHex(b.previous, 64)) w.rawHex(b.previous);
  else throw new EncodeError('previous must be 32 bytes of hex');
  w.u64be(b.balance).i64be(b.timestamp);

  if (b.memo !== '' && b.type !== 'send' && b.type !== 'burn') {
    throw new EncodeError(`memo not allowed on ${b.type} blocks`);
  }
  const hasTiming = TIMING_FIELDS.some((f) => b[f] !== 0n);
  if (hasTiming && b.type !== 'genesis') throw new EncodeError(`lease-timing fields not allowed on ${b.type} blocks`);

  switch (b.type) {
    case 'send':
      raw32(w, b.destination, 'destination');
      w.u64be(b.amount);
      break;
    case 'receive':
    case 'lease_cancel':
    case 'lease_force_settle':
      raw32(w, b.source, 'source');
      break;
    case 'lease':
      raw32(w, b.destination, 'destination');
      w.u64be(b.amount).u64be(b.vcpus).u64be(b.memory_mb).u64be(b.disk_gb).u64be(b.duration);
      raw32(w, b.access_pub_key, 'access_pub_key');
      break;
    case 'lease_accept':
      raw32(w, b.source, 'source');
      w.u64be(b.amount).u64be(b.locked_r).u64be(b.locked_payout_cap).u64be(b.locked_twap_milli);
      break;
    case 'lease_settle':
      raw32(w, b.source, 'source');
      w.u64be(b.amount);
      break;
    case 'lease_renew':
      raw32(w, b.source, 'source');
      w.u64be(b.amount).u64be(b.duration).u64be(b.locked_r).u64be(b.locked_payout_cap).u64be(b.locked_twap_milli);
      break;
    case 'burn':
    case 'mint':
      w.u64be(b.amount);
      break;
    case 'multisig_open':
    case 'multisig_update': {
      const keys = [...(b.keyset?.keys ?? [])].sort();
      w.u32be(b.keyset?.threshold ?? 0).u32be(keys.length);
      keys.forEach((k, i) => raw32(w, k, `keyset key ${i}`));
      break;
    }
    case 'genesis':
      break;
  }
  raw32(w, b.representative, 'representative');
  if (b.type === 'genesis' && hasTiming) {
    w.u64be(b.lease_min_duration_secs)
      .i64be(b.lease_settle_grace_ns)
      .i64be(b.lease_force_settle_gap_ns)
      .i64be(b.lease_escrow_expiry_ns)
      .i64be(b.lease_archive_gap_ns)
      .i64be(b.max_attestation_skew_ns);
  }
  if (b.type === 'send' || b.type === 'burn') {
    const problem = memoError(b.memo);
    if (problem) throw new EncodeError(problem);
    const memo = Buffer.from(b.memo, 'utf8');
    w.u8(memo.length).bytes(memo);
  }
  return w.finish();
}

/** §5 canonical bytes; an encoding failure is LedgerError invalid `verify: encode: <detail>`. */
export function canonicalBytes(block: Block): Uint8Array {
  try {
    return encode(block);
  } catch (e) {
    if (e instanceof EncodeError || e instanceof RangeError) throw invalid(`verify: encode: ${e.message}`);
    throw e;
  }
}

const PUBKEY_TAG = 'net/block/pubkey/v1';

function byPublicKey(a: { public_key: string }, b: { public_key: string }): number {
  return a.public_key < b.public_key ? -1 : a.public_key > b.public_key ? 1 : 0;
}

/** §6 aux section (empty for most blocks). */
export function auxBytes(block: Block): Uint8Array {
  const w = new ByteWriter(128);
  if (block.pub_key !== '') w.lp8(PUBKEY_TAG).lp8(block.pub_key);
  if (LEASE_SECTION_TYPES.has(block.type)) {
    w.lp8(block.certificate_hash).u64be(BigInt(block.attestations.length));
    for (const a of [...block.attestations].sort(byPublicKey)) {
      w.lp8(a.public_key).i64be(a.timestamp).lp8(a.signature);
    }
  }
  return w.finish();
}

/** §7.1: hex(sha256(network_id ‖ canonical ‖ aux)); pass "" for the ledger genesis. */
export function computeBlockHash(block: Block, networkId: string): string {
  const canonical = canonicalBytes(block);
  let aux: Uint8Array;
  try {
    aux = auxBytes(block);
  } catch (e) {
    if (e instanceof RangeError) throw invalid(`verify: encode: ${e.message}`);
    throw e;
  }
  return hash('sha256', Buffer.concat([Buffer.from(networkId, 'utf8'), canonical, aux]), 'hex');
}

// ---------------------------------------------------------------------------------------------
// verify step (§7.4)

/** §7.2 key declaration rule the block breaks (without prefix), or undefined. */
export function pubKeyDeclarationError(b: Block): string | undefined {
  if (isMultisig(b)) return b.pub_key === '' ? undefined : 'multisig block must not declare pub_key';
  if (b.previous === '0') {
    if (b.pub_key === '') return 'open block must declare pub_key';
    if (!isLowerHex(b.pub_key, 64)) return 'invalid pub_key: must be 32 bytes of hex';
    const derived = accountAddress(b.pub_key);
    if (derived !== b.account) {
      return `pub_key does not derive account address: derived ${derived}, account ${b.account}`;
    }
    return undefined;
  }
  return b.pub_key === '' ? undefined : 'non-open block must not declare pub_key';
}

/**
 * §7.4: hash recompute, §7.2 key declaration, and an opening single-key block's own signature
 * (through `verify`, so a caller can supply signatures it checked ahead in bulk).
 */
export function verifyBlockIntrinsics(
  block: Block,
  networkId: string,
  verify: (publicKeyHex: string, hashHex: string, signatureHex: string) => boolean = verifyHashSignature,
): void {
  const computed = computeBlockHash(block, networkId);
  if (computed !== block.hash) throw invalid(`verify: hash mismatch: got ${block.hash}, want ${computed}`);
  const keyProblem = pubKeyDeclarationError(block);
  if (keyProblem) throw invalid(`verify: ${keyProblem}`);
  if (!isMultisig(block) && block.previous === '0') {
    if (!verify(block.pub_key, block.hash, block.signature)) {
      throw invalid('verify: signature verification failed');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Block → JSON (§3 emission)

/** §3 emission: exactly the applicable keys, zero values filled, `finalized` last when given. */
export function blockToJson(block: Block, opts: { finalized?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of applicableFields(block.type, isMultisig(block), block.previous === '0')) out[key] = blockToJsonMember(block, key);
  if (opts.finalized !== undefined) out.finalized = opts.finalized;
  return out;
}

/** One applicable member of §3 emission (nested values as fresh plain objects). */
function blockToJsonMember(block: Block, key: string): unknown {
  switch (key) {
    case 'keyset':
      return { keys: [...(block.keyset?.keys ?? [])], threshold: block.keyset?.threshold ?? 0 };
    case 'signatures':
      return (block.signatures ?? []).map((s) => ({ public_key: s.public_key, signature: s.signature }));
    case 'attestations':
      return block.attestations.map((a) => ({ public_key: a.public_key, timestamp: a.timestamp, signature: a.signature }));
    default:
      return block[key as keyof Block];
  }
}

const jsonTexts = new WeakMap<Block, string>();

/**
 * `stringifyJson(blockToJson(block))`, encoded once per block object: the store writes it and the
 * API answers a submission with the same text. For blocks the ledger holds, which are never
 * modified once taken in (the intake works on its own copy).
 */
export function blockJsonText(block: Block): string {
  let text = jsonTexts.get(block);
  if (text === undefined) jsonTexts.set(block, (text = writeBlockJson(block)));
  return text;
}

/** `"key":` of each block field, encoded once. */
const memberPrefixes = new Map<string, string>();

/**
 * The text of `stringifyJson(blockToJson(block))`, written field by field (once per block taken
 * in): no intermediate object, and the nested values alone go through the generic encoder.
 */
function writeBlockJson(block: Block): string {
  let s = '{';
  for (const key of applicableFields(block.type, isMultisig(block), block.previous === '0')) {
    let value: string;
    switch (key) {
      case 'keyset':
      case 'signatures':
      case 'attestations':
        value = stringifyJson(blockToJsonMember(block, key));
        break;
      default: {
        const v = block[key as keyof Block];
        if (v === undefined) continue;
        value = typeof v === 'string' ? JSON.stringify(v) : typeof v === 'bigint' ? v.toString() : stringifyJson(v);
      }
    }
    let prefix = memberPrefixes.get(key);
    if (prefix === undefined) memberPrefixes.set(key, (prefix = `${JSON.stringify(key)}:`));
    s += (s.length === 1 ? '' : ',') + prefix + value;
  }
  return s + '}';
}
