// Chat envelope (chat-and-directory.md §2–§4): shape, canonical id, and full verification.
import { createHash } from 'node:crypto';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { ByteWriter, I64_MIN, I64_MAX, U64_MAX } from '../../ledger/codec/bytes.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { verifyHashSignature } from '../../ledger/crypto/ed25519.js';
import { powValid } from '../../ledger/crypto/pow.js';

export interface ChatEnvelope {
  id: string;
  from: string;
  pub_key: string;
  to: string;
  message: string;
  timestamp: bigint;
  signature: string;
  pow_nonce: bigint;
}

export const MAX_MESSAGE_BYTES = 8192;
/** ±5 minutes around the receiving node's clock (§2). */
export const FRESHNESS_WINDOW_NS = 300_000_000_000n;
export const DEFAULT_CHAT_DIFFICULTY = 0xffffc00000000000n;
export const DEVNET_CHAT_DIFFICULTY = 0x2n;

/** A body that is not an envelope-shaped JSON object (→ `400 invalid request body`). */
export class EnvelopeShapeError extends Error {}

/** §2 pre-image: lp4 of the three hex texts and the message, then u64be(timestamp). */
export function envelopeIdPreimage(e: Pick<ChatEnvelope, 'from' | 'pub_key' | 'to' | 'message' | 'timestamp'>): Uint8Array {
  return new ByteWriter(256).lp4(e.from).lp4(e.pub_key).lp4(e.to).lp4(e.message).i64be(e.timestamp).finish();
}

export function envelopeId(e: Pick<ChatEnvelope, 'from' | 'pub_key' | 'to' | 'message' | 'timestamp'>): string {
  return createHash('sha256').update(envelopeIdPreimage(e)).digest('hex');
}

function stringField(obj: { [key: string]: JsonValue }, key: string): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new EnvelopeShapeError(`${key} must be a string`);
  return v;
}

function intField(obj: { [key: string]: JsonValue }, key: string, min: bigint, max: bigint): bigint {
  const v = obj[key];
  if (v === undefined || v === null) return 0n;
  if (typeof v !== 'bigint' || v < min || v > max) throw new EnvelopeShapeError(`${key} must be an integer in range`);
  return v;
}

/** Structural decode; absent fields read as their zero value so the §4 checks can name them. */
export function parseEnvelope(json: JsonValue): ChatEnvelope {
  if (!isJsonObject(json)) throw new EnvelopeShapeError('envelope must be a JSON object');
  return {
    id: stringField(json, 'id'),
    from: stringField(json, 'from'),
    pub_key: stringField(json, 'pub_key'),
    to: stringField(json, 'to'),
    message: stringField(json, 'message'),
    timestamp: intField(json, 'timestamp', I64_MIN, I64_MAX),
    signature: stringField(json, 'signature'),
    pow_nonce: intField(json, 'pow_nonce', 0n, U64_MAX),
  };
}

/** Output shape: every field, in the documented order. */
export function envelopeToJson(e: ChatEnvelope): ChatEnvelope {
  return {
    id: e.id,
    from: e.from,
    pub_key: e.pub_key,
    to: e.to,
    message: e.message,
    timestamp: e.timestamp,
    signature: e.signature,
    pow_nonce: e.pow_nonce,
  };
}

export interface VerifyContext {
  now: bigint;
  /** The node's chat difficulty; 0 disables the proof of work. */
  difficulty: bigint;
}

/**
 * §4 step 5: the first failing reason, or null when the envelope is fully valid.
 * The caller prefixes `invalid envelope: ` (API) or `envelope verification failed: ` (relay).
 */
export function envelopeFailure(e: ChatEnvelope, ctx: VerifyContext): string | null {
  if (!e.from || !e.pub_key || !e.to || !e.message || e.timestamp === 0n || !e.signature) {
    return 'missing required fields';
  }
  if (!isLowerHex(e.from, 64) || !isLowerHex(e.pub_key, 64) || !isLowerHex(e.to, 64)) {
    return 'malformed address or key';
  }
  if (Buffer.byteLength(e.message, 'utf8') > MAX_MESSAGE_BYTES) {
    return `message exceeds maximum length of ${MAX_MESSAGE_BYTES} bytes`;
  }
  const skew = ctx.now - e.timestamp;
  if (skew > FRESHNESS_WINDOW_NS || skew < -FRESHNESS_WINDOW_NS) {
    return 'envelope timestamp outside freshness window';
  }
  if (e.id !== envelopeId(e)) return 'envelope ID mismatch';
  if (!powValid(e.pow_nonce, e.id, ctx.difficulty)) return 'insufficient proof of work';
  if (accountAddress(e.pub_key) !== e.from) {
    return `envelope key: public key does not derive account ${e.from}`;
  }
  if (!isLowerHex(e.signature, 128)) return 'invalid signature hex';
  if (!verifyHashSignature(e.pub_key, e.id, e.signature)) return 'signature verification failed';
  return null;
}
