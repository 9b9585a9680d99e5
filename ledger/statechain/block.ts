// State chain block: parsing from JSON text (op values kept as raw text), canonical bytes, hash and
// emission (statechain.md §2). Only JSON types are checked here; every protocol rule is in rules.ts.
import { createHash } from 'node:crypto';
import { ByteWriter, U64_MAX, I64_MIN, I64_MAX } from '../codec/bytes.js';
import { BodyShapeError } from '../codec/block.js';
import { isJsonObject, parseJson, RawJson, stringifyJson, type JsonValue } from '../codec/json.js';
import type { StatechainBlock } from '../service.js';

/** The `raw` option of parseJson for a block: each op's `value` keeps its exact source text (§2.4). */
export const RAW_OP_VALUE = (p: readonly (string | number)[]): boolean =>
  p.length === 3 && p[0] === 'ops' && p[2] === 'value';

export type StatechainOp = StatechainBlock['ops'][number];

/** Parse a block from JSON text. Throws BodyShapeError on malformed JSON or wrong JSON types. */
export function parseStatechainBlock(text: string): StatechainBlock {
  let json: JsonValue;
  try {
    json = parseJson(text, { raw: RAW_OP_VALUE });
  } catch {
    throw new BodyShapeError('statechain block: malformed JSON');
  }
  return statechainBlockFromJson(json);
}

/**
 * Build a block from a value parsed with the raw option (`parseJson(text, {raw})` selecting
 * `ops[i].value`). An op's action is kept as written, even when unknown: the op rules (§5) name it.
 */
export function statechainBlockFromJson(json: JsonValue): StatechainBlock {
  if (!isJsonObject(json)) throw shape('block must be an object');
  const index = integer(json.index, 'index', 0n, U64_MAX);
  const timestamp = integer(json.timestamp, 'timestamp', I64_MIN, I64_MAX);
  const prev_hash = string(json.prev_hash, 'prev_hash');
  const hash = string(json.hash, 'hash');
  if (!Array.isArray(json.ops)) throw shape('ops must be an array');
  const ops = json.ops.map((op, i) => parseOp(op, i));
  const sigs = json.signatures ?? [];
  if (!Array.isArray(sigs)) throw shape('signatures must be an array');
  const signatures = sigs.map((s, i) => {
    if (!isJsonObject(s)) throw shape(`signatures[${i}] must be an object`);
    return {
      public_key: string(s.public_key, `signatures[${i}].public_key`),
      signature: string(s.signature, `signatures[${i}].signature`),
    };
  });
  return { index, prev_hash, ops, signatures, hash, timestamp };
}

function parseOp(op: JsonValue, i: number): StatechainOp {
  if (!isJsonObject(op)) throw shape(`ops[${i}] must be an object`);
  const action = string(op.action, `ops[${i}].action`) as StatechainOp['action'];
  const key = string(op.key, `ops[${i}].key`);
  const value = op.value;
  // Values only exist on `set`. A `null` is kept as written so the hash covers the text that was
  // sent; the op rules then treat it as absent (README.md "JSON").
  if (action !== 'set' || value === undefined) return { action, key };
  if (!(value instanceof RawJson)) throw shape(`ops[${i}].value was not captured as raw text`);
  return { action, key, value };
}

function shape(message: string): BodyShapeError {
  return new BodyShapeError(`statechain block: ${message}`);
}

function string(v: JsonValue | undefined, field: string): string {
  if (typeof v !== 'string') throw shape(`${field} must be a string`);
  return v;
}

function integer(v: JsonValue | undefined, field: string, min: bigint, max: bigint): bigint {
  if (typeof v !== 'bigint' || v < min || v > max) throw shape(`${field} must be an integer in range`);
  return v;
}

const ACTION_BYTE: Readonly<Record<string, number>> = { set: 0x01, delete: 0x02 };
const MAX_KEY_BYTES = 0xffff;

/** False when the block cannot be encoded at all (unknown action, key longer than a u16 length). */
export function isEncodable(b: StatechainBlock): boolean {
  return b.ops.every(
    (op) => ACTION_BYTE[op.action] !== undefined && Buffer.byteLength(op.key, 'utf8') <= MAX_KEY_BYTES,
  );
}

/** Canonical bytes (§2.2). The caller has checked `prev_hash` shape and `isEncodable`. */
export function canonicalBytes(b: StatechainBlock): Uint8Array {
  const w = new ByteWriter(128);
  w.u64be(b.index).rawHex(b.prev_hash).u32be(b.ops.length);
  for (const op of b.ops) {
    w.u8(ACTION_BYTE[op.action]!);
    w.u16be(Buffer.byteLength(op.key, 'utf8')).utf8(op.key);
    if (op.action === 'set' && op.value) w.lp4(op.value.text);
    else w.u32be(0);
  }
  return w.i64be(b.timestamp).finish();
}

/** `hex(sha256(canonical bytes))` (§2.3): no network id, no domain tag. */
export function statechainHash(b: StatechainBlock): string {
  return createHash('sha256').update(canonicalBytes(b)).digest('hex');
}

/** The block as a JSON-ready object in field order of §2.1, values verbatim. */
export function statechainBlockJson(b: StatechainBlock): Record<string, unknown> {
  return {
    index: b.index,
    prev_hash: b.prev_hash,
    ops: b.ops.map((op) => (op.value ? { action: op.action, key: op.key, value: op.value } : { action: op.action, key: op.key })),
    signatures: b.signatures.map((s) => ({ public_key: s.public_key, signature: s.signature })),
    hash: b.hash,
    timestamp: b.timestamp,
  };
}

/** Compact JSON text of the block; op values are written as their raw text. */
export function emitStatechainBlock(b: StatechainBlock): string {
  return stringifyJson(statechainBlockJson(b));
}
