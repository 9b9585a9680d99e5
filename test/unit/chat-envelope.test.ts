import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../../ledger/codec/hex.js';
import { signEd25519, verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import { powValid, powValue, solvePow } from '../../ledger/crypto/pow.js';
import {
  DEFAULT_CHAT_DIFFICULTY,
  DEVNET_CHAT_DIFFICULTY,
  envelopeFailure,
  envelopeId,
  envelopeIdPreimage,
  EnvelopeShapeError,
  envelopeToJson,
  parseEnvelope,
  type ChatEnvelope,
} from '../../agent/chat/envelope.js';
import { stringifyJson } from '../../ledger/codec/json.js';
import { devKey, vectors, type Obj } from './net-helpers.js';

const envelopeVectors = vectors.chat_envelope_vectors as Obj[];

/** A fresh envelope from dev6 to dev7 signed at `now`, PoW solved at `difficulty`. */
function makeEnvelope(now: bigint, difficulty: bigint, over: Partial<ChatEnvelope> = {}): ChatEnvelope {
  const from = devKey(6);
  const base = { from: from.address, pub_key: from.publicKey, to: devKey(7).address, message: 'hi', timestamp: now, ...over };
  const id = envelopeId(base);
  return {
    ...base,
    id,
    signature: signEd25519(from.seed, Buffer.from(id, 'hex')),
    pow_nonce: solvePow(id, difficulty),
  };
}

describe('chat envelope vectors', () => {
  it.each(envelopeVectors.map((v, i) => [i, v] as const))('vector %i: pre-image and id', (_i, v) => {
    const env = parseEnvelope(v.envelope!);
    expect(bytesToHex(envelopeIdPreimage(env))).toBe(v.id_preimage_hex);
    expect(envelopeId(env)).toBe(v.id);
    expect(env.id).toBe(v.id);
  });

  it('vector 0: signature over raw id, PoW at the default difficulty, fully valid at its timestamp', () => {
    const v = envelopeVectors[0]!;
    const env = parseEnvelope(v.envelope!);
    expect(verifyEd25519(env.pub_key, Buffer.from(env.id, 'hex'), env.signature)).toBe(true);
    expect(powValue(env.pow_nonce, env.id).toString(16)).toBe(v.pow_value_hex);
    expect(powValid(env.pow_nonce, env.id, DEFAULT_CHAT_DIFFICULTY)).toBe(true);
    expect(powValid(env.pow_nonce - 1n, env.id, DEFAULT_CHAT_DIFFICULTY)).toBe(false);
    expect(envelopeFailure(env, { now: env.timestamp, difficulty: DEFAULT_CHAT_DIFFICULTY })).toBeNull();
    expect(envelopeFailure(env, { now: env.timestamp, difficulty: DEVNET_CHAT_DIFFICULTY })).toBeNull();
    // Output: every field, in the documented order, u64/i64 exact.
    expect(stringifyJson(envelopeToJson(env))).toBe(stringifyJson(v.envelope));
  });

  it('vector 1: an empty message is rejected as missing required fields', () => {
    const env = parseEnvelope(envelopeVectors[1]!.envelope!);
    expect(envelopeFailure(env, { now: 1n, difficulty: 0n })).toBe('missing required fields');
  });
});

describe('envelope verification reasons, in order', () => {
  const now = 1_800_000_000_000_000_000n;
  const ctx = { now, difficulty: DEVNET_CHAT_DIFFICULTY };

  it('accepts a fresh, well-formed envelope', () => {
    expect(envelopeFailure(makeEnvelope(now, ctx.difficulty), ctx)).toBeNull();
  });

  it.each([
    ['from', { from: '' }],
    ['pub_key', { pub_key: '' }],
    ['to', { to: '' }],
    ['message', { message: '' }],
    ['timestamp', { timestamp: 0n }],
    ['signature', { signature: '' }],
  ] as const)('missing %s → missing required fields', (_f, over) => {
    expect(envelopeFailure({ ...makeEnvelope(now, ctx.difficulty), ...over }, ctx)).toBe('missing required fields');
  });

  it.each([
    ['uppercase from', { from: devKey(6).address.toUpperCase() }],
    ['short pub_key', { pub_key: 'ab' }],
    ['non-hex to', { to: 'z'.repeat(64) }],
  ] as const)('%s → malformed address or key', (_n, over) => {
    expect(envelopeFailure({ ...makeEnvelope(now, ctx.difficulty), ...over }, ctx)).toBe('malformed address or key');
  });

  it('a message of 8193 bytes is too long (8192 is fine)', () => {
    expect(envelopeFailure(makeEnvelope(now, ctx.difficulty, { message: 'a'.repeat(8192) }), ctx)).toBeNull();
    // 4097 two-byte characters = 8194 bytes though only 4097 UTF-16 units.
    expect(envelopeFailure(makeEnvelope(now, ctx.difficulty, { message: 'é'.repeat(4097) }), ctx)).toBe(
      'message exceeds maximum length of 8192 bytes',
    );
  });

  it('timestamps more than 5 minutes away from the clock are stale (boundary inclusive)', () => {
    const edge = 300_000_000_000n;
    expect(envelopeFailure(makeEnvelope(now - edge, ctx.difficulty), ctx)).toBeNull();
    expect(envelopeFailure(makeEnvelope(now + edge, ctx.difficulty), ctx)).toBeNull();
    for (const ts of [now - edge - 1n, now + edge + 1n]) {
      expect(envelopeFailure(makeEnvelope(ts, ctx.difficulty), ctx)).toBe('envelope timestamp outside freshness window');
    }
  });

  it('a changed field no longer matches the id', () => {
    const env = makeEnvelope(now, ctx.difficulty);
    expect(envelopeFailure({ ...env, message: 'changed' }, ctx)).toBe('envelope ID mismatch');
    expect(envelopeFailure({ ...env, id: 'a'.repeat(64) }, ctx)).toBe('envelope ID mismatch');
  });

  it('insufficient proof of work at the node difficulty; difficulty 0 disables it', () => {
    const env = makeEnvelope(now, 0n);
    const hard = { now, difficulty: DEFAULT_CHAT_DIFFICULTY };
    const weak = powValid(env.pow_nonce, env.id, DEFAULT_CHAT_DIFFICULTY) ? { ...env, pow_nonce: env.pow_nonce + 1n } : env;
    expect(powValid(weak.pow_nonce, weak.id, DEFAULT_CHAT_DIFFICULTY)).toBe(false);
    expect(envelopeFailure(weak, hard)).toBe('insufficient proof of work');
    expect(envelopeFailure(weak, { now, difficulty: 0n })).toBeNull();
  });

  it('a key that does not derive from', () => {
    const env = makeEnvelope(now, ctx.difficulty, { pub_key: devKey(8).publicKey });
    expect(envelopeFailure(env, ctx)).toBe(`envelope key: public key does not derive account ${env.from}`);
  });

  it('signature checks: malformed hex, then verification', () => {
    const env = makeEnvelope(now, ctx.difficulty);
    expect(envelopeFailure({ ...env, signature: env.signature.toUpperCase() }, ctx)).toBe('invalid signature hex');
    expect(envelopeFailure({ ...env, signature: 'ab' }, ctx)).toBe('invalid signature hex');
    const other = signEd25519(devKey(6).seed, Buffer.from('b'.repeat(64), 'hex'));
    expect(envelopeFailure({ ...env, signature: other }, ctx)).toBe('signature verification failed');
  });
});

describe('parseEnvelope', () => {
  it('reads absent fields as zero values', () => {
    expect(parseEnvelope({})).toEqual({
      id: '', from: '', pub_key: '', to: '', message: '', timestamp: 0n, signature: '', pow_nonce: 0n,
    });
  });

  it.each([
    ['not an object', []],
    ['string timestamp', { timestamp: '1' }],
    ['fractional timestamp', { timestamp: 1.5 }],
    ['negative pow_nonce', { pow_nonce: -1n }],
    ['pow_nonce ≥ 2^64', { pow_nonce: 1n << 64n }],
    ['numeric message', { message: 5n }],
  ] as const)('%s → shape error', (_n, body) => {
    expect(() => parseEnvelope(body as never)).toThrow(EnvelopeShapeError);
  });
});
