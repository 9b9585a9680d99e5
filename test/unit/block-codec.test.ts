import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJson, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';
import {
  BodyShapeError,
  applicableFields,
  auxBytes,
  blockJsonText,
  blockToJson,
  canonicalBytes,
  computeBlockHash,
  intakeBlock,
  memoError,
  parseBlockJson,
  verifyBlockIntrinsics,
} from '../../ledger/codec/block.js';
import { bytesToHex } from '../../ledger/codec/hex.js';
import { powValue, solvePow } from '../../ledger/crypto/pow.js';
import { verifyEd25519, signEd25519, publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { LedgerError } from '../../ledger/errors.js';
import type { Block } from '../../ledger/types.js';

type Obj = Record<string, JsonValue>;
const vectors = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as Obj;
const devKeys = vectors.dev_keys as Obj[];
const keyOf = (name: string) => devKeys.find((k) => k.name === name)!.public_key as string;
const seedOf = (n: number) => new Uint8Array(32).fill(n);
const blockVectors = vectors.block_vectors as Obj[];

function load(json: JsonValue): Block {
  return intakeBlock(parseBlockJson(json));
}

/** The LedgerError a call throws (fails the test when it does not throw one). */
function ledgerError(fn: () => unknown): LedgerError {
  try {
    fn();
  } catch (e) {
    if (e instanceof LedgerError) return e;
    throw e;
  }
  throw new Error('expected a LedgerError');
}

function baseVector(name: string, network = 'devnet'): Obj {
  return blockVectors.find((v) => v.name === name && v.network_id === network)!;
}

/** A block vector's JSON with some members replaced (undefined removes the member). */
function variant(name: string, changes: Record<string, JsonValue | undefined>): Obj {
  const out: Obj = { ...(baseVector(name).block as Obj) };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

describe('block vectors', () => {
  it('has all 41 vectors', () => {
    expect(blockVectors.length).toBe(41);
  });

  for (const v of blockVectors) {
    const label = `${v.name} (${v.network_id === '' ? 'empty network id' : v.network_id})`;
    it(`${label}: canonical, aux, hash, signature, pow, emission`, () => {
      const block = load(v.block);
      const canonical = canonicalBytes(block);
      expect(bytesToHex(canonical)).toBe(v.canonical_hex);
      expect(BigInt(canonical.length)).toBe(v.canonical_length);
      expect(bytesToHex(auxBytes(block))).toBe(v.aux_hex);
      expect(computeBlockHash(block, v.network_id as string)).toBe(v.hash);
      expect(block.hash).toBe(v.hash);
      verifyBlockIntrinsics(block, v.network_id as string);

      const hashBytes = Buffer.from(block.hash, 'hex');
      if (v.signer !== undefined) {
        expect(block.signature).toBe(v.signature);
        expect(verifyEd25519(keyOf(v.signer as string), hashBytes, block.signature)).toBe(true);
      } else {
        const signers = v.signers as string[];
        const sigs = v.signatures as Obj[];
        expect(block.signatures).toHaveLength(signers.length);
        signers.forEach((name, i) => {
          expect(block.signatures![i]!.public_key).toBe(keyOf(name));
          expect(block.signatures![i]!.signature).toBe(sigs[i]!.signature);
          expect(verifyEd25519(keyOf(name), hashBytes, block.signatures![i]!.signature)).toBe(true);
        });
      }
      if (v.pow_value_hex !== undefined) {
        expect(powValue(block.pow_nonce, block.hash).toString(16).padStart(16, '0')).toBe(v.pow_value_hex);
      }
      expect(stringifyJson(blockToJson(block))).toBe(stringifyJson(v.block));
      // The text the store writes and the API answers, written field by field, is the same.
      expect(blockJsonText(block)).toBe(stringifyJson(blockToJson(block)));
    });
  }

  it('appends finalized last', () => {
    const json = blockToJson(load(baseVector('send_xe_with_memo').block), { finalized: true });
    const keys = Object.keys(json);
    expect(keys[keys.length - 1]).toBe('finalized');
    expect(json.finalized).toBe(true);
  });

  it('a signature over a different network id does not match the hash', () => {
    const v = baseVector('send_xe_with_memo');
    expect(computeBlockHash(load(v.block), 'othernet')).not.toBe(v.hash);
    expect(ledgerError(() => verifyBlockIntrinsics(load(v.block), 'othernet')).message).toMatch(
      /^verify: hash mismatch: got [0-9a-f]{64}, want [0-9a-f]{64}$/,
    );
  });
});

describe('emission of zero values and applicable keys', () => {
  it('fills zero values and drops keys that do not apply', () => {
    const json = variant('send_xusd_no_memo', { memo: undefined, source: 'ab'.repeat(32), vcpus: 4n });
    const block = load(json);
    expect(block.source).toBe('');
    expect(block.vcpus).toBe(0n);
    const out = blockToJson(block);
    expect(out.memo).toBe('');
    expect('source' in out).toBe(false);
    expect('vcpus' in out).toBe(false);
    expect(stringifyJson(out)).toBe(stringifyJson(baseVector('send_xusd_no_memo').block));
  });

  it('a lease hashes with zero attestations whatever its JSON carried', () => {
    const att = ((baseVector('lease_accept').block as Obj).attestations as JsonValue[])[0]!;
    const block = load(variant('lease', { attestations: [att] }));
    expect(block.attestations).toEqual([]);
    expect(computeBlockHash(block, 'devnet')).toBe(baseVector('lease').hash);
  });

  it('applicableFields: pub_key only on a single-key opening block, pow_nonce never on genesis', () => {
    expect(applicableFields('receive', false, true)).toContain('pub_key');
    expect(applicableFields('receive', false, false)).not.toContain('pub_key');
    expect(applicableFields('receive', true, true)).not.toContain('pub_key');
    expect(applicableFields('receive', true, true)).toContain('signatures');
    expect(applicableFields('receive', true, true)).not.toContain('signature');
    expect(applicableFields('genesis', false, true)).not.toContain('pow_nonce');
    expect(applicableFields('send', false, false)).toEqual([
      'type', 'account', 'previous', 'balance', 'timestamp', 'asset', 'representative', 'destination', 'amount',
      'memo', 'signature', 'hash', 'pow_nonce',
    ]);
  });
});

describe('parseBlockJson shapes and types', () => {
  const send = () => variant('send_xe_with_memo', {});

  it('reads missing numbers as 0, missing strings as "", null as absent', () => {
    const b = parseBlockJson({ type: 'send', amount: null, memo: null });
    expect(b.amount).toBe(0n);
    expect(b.memo).toBe('');
    expect(b.balance).toBe(0n);
    expect(b.signatures).toBeNull();
  });

  it('accepts the full u64 and i64 ranges', () => {
    const b = parseBlockJson({ ...send(), balance: 18446744073709551615n, timestamp: -9223372036854775808n });
    expect(b.balance).toBe(18446744073709551615n);
    expect(b.timestamp).toBe(-9223372036854775808n);
  });

  it.each([
    ['a fraction', { amount: 1.5 }],
    ['an exponent', { amount: 1e3 }],
    ['a quoted number', { amount: '5' }],
    ['a negative u64', { amount: -1n }],
    ['u64 overflow', { balance: 18446744073709551616n }],
    ['i64 overflow', { timestamp: 9223372036854775808n }],
    ['i64 underflow', { timestamp: -9223372036854775809n }],
    ['a numeric string field', { account: 5n }],
    ['a non-array attestations', { attestations: {} }],
    ['a non-object attestation', { attestations: [1n] }],
    ['a non-array signatures', { signatures: 'x' }],
    ['a non-object keyset', { keyset: [] }],
    ['a fractional attestation timestamp', { attestations: [{ public_key: 'a', timestamp: 0.5, signature: 'b' }] }],
  ])('rejects %s as a body shape error', (_label, patch) => {
    expect(() => parseBlockJson({ ...send(), ...(patch as Obj) })).toThrow(BodyShapeError);
  });

  it('rejects a non-object body', () => {
    expect(() => parseBlockJson([])).toThrow(BodyShapeError);
    expect(() => parseBlockJson('send')).toThrow(BodyShapeError);
  });

  it('unknown types: quoted only when name-shaped, retryable code', () => {
    const e = ledgerError(() => parseBlockJson({ type: 'teleport' }));
    expect(e.code).toBe('unknown_type');
    expect(e.message).toBe('unknown block type: teleport');
    expect(e.retryable()).toBe(true);
    for (const bad of ['Teleport', 'x'.repeat(33), '1abc', '', 'a-b']) {
      const e2 = ledgerError(() => parseBlockJson({ type: bad }));
      expect(e2.code).toBe('invalid');
      expect(e2.message).toBe('invalid block type');
    }
    expect(ledgerError(() => parseBlockJson({})).message).toBe('invalid block type');
    expect(ledgerError(() => parseBlockJson({ type: 7n })).message).toBe('invalid block type');
    expect(() => parseBlockJson({ type: 'teleport', amount: 1.5 })).toThrow(BodyShapeError);
  });

  it('"__proto__" and inherited names are never read as fields', () => {
    const json = parseJson('{"type":"send","__proto__":{"amount":5},"constructor":1}') as Obj;
    const b = parseBlockJson(json);
    expect(b.amount).toBe(0n);
    expect(b.type).toBe('send');
    expect(Object.getPrototypeOf(b)).toBe(Object.prototype);
  });

  it('a signatures array (even empty) makes the block multisig', () => {
    expect(parseBlockJson({ type: 'send', signatures: [] }).signatures).toEqual([]);
  });
});

describe('intake rejections', () => {
  const msg = (json: Obj) => ledgerError(() => load(json)).message;
  const hex64 = 'ab'.repeat(32);

  it('hex shape of every field, uppercase rejected never normalized', () => {
    const upper = (baseVector('send_xe_with_memo').block as Obj).destination as string;
    expect(msg(variant('send_xe_with_memo', { destination: upper.toUpperCase() }))).toBe(
      'invalid destination: must be 64 lowercase hex characters',
    );
    expect(msg(variant('send_xe_with_memo', { account: '' }))).toBe(
      'invalid account: must be 64 lowercase hex characters',
    );
    expect(msg(variant('send_xe_with_memo', { hash: undefined }))).toBe(
      'invalid hash: must be 64 lowercase hex characters',
    );
    expect(msg(variant('send_xe_with_memo', { previous: '' }))).toBe(
      'invalid previous: must be 64 lowercase hex characters',
    );
    expect(msg(variant('send_xe_with_memo', { previous: '00' }))).toBe(
      'invalid previous: must be 64 lowercase hex characters',
    );
    expect(msg(variant('send_xe_with_memo', { signature: 'ab' }))).toBe(
      'invalid signature: must be 128 lowercase hex characters',
    );
    expect(msg(variant('send_xe_with_memo', { representative: 'g'.repeat(64) }))).toBe(
      'invalid representative: must be 64 lowercase hex characters',
    );
    expect(msg(variant('lease', { access_pub_key: hex64.slice(2) }))).toBe(
      'invalid access_pub_key: must be 64 lowercase hex characters',
    );
    expect(msg(variant('lease', { certificate_hash: hex64.toUpperCase() }))).toBe(
      'invalid certificate_hash: must be 64 lowercase hex characters',
    );
    expect(msg(variant('receive_xusd', { source: 'x' }))).toBe('invalid source: must be 64 lowercase hex characters');
    expect(msg(variant('open_receive_declares_key', { pub_key: 'AB'.repeat(32) }))).toBe(
      'invalid pub_key: must be 64 lowercase hex characters',
    );
  });

  it('indexes array elements', () => {
    const ms = baseVector('multisig_open').block as Obj;
    const sigs = (ms.signatures as Obj[]).map((s) => ({ ...s }));
    sigs[1]!.public_key = 'AB'.repeat(32);
    expect(msg(variant('multisig_open', { signatures: sigs }))).toBe(
      'invalid signatures[1].public_key: must be 64 lowercase hex characters',
    );
    const sigs2 = (ms.signatures as Obj[]).map((s) => ({ ...s }));
    sigs2[0]!.signature = 'ab';
    expect(msg(variant('multisig_open', { signatures: sigs2 }))).toBe(
      'invalid signatures[0].signature: must be 128 lowercase hex characters',
    );
    const ks = ms.keyset as Obj;
    expect(msg(variant('multisig_open', { keyset: { ...ks, keys: [...(ks.keys as string[]), 'zz'] } }))).toBe(
      'invalid keyset.keys[3]: must be 64 lowercase hex characters',
    );
    const att = { ...(((baseVector('lease_accept').block as Obj).attestations as Obj[])[0] as Obj) };
    expect(msg(variant('lease_accept', { attestations: [{ ...att, public_key: '12' }] }))).toBe(
      'invalid attestations[0].public_key: must be 64 lowercase hex characters',
    );
    expect(msg(variant('lease_accept', { attestations: [{ ...att, signature: 'A'.repeat(128) }] }))).toBe(
      'invalid attestations[0].signature: must be 128 lowercase hex characters',
    );
  });

  it('a non-applicable field is dropped before its shape is checked', () => {
    expect(load(variant('receive_xusd', { destination: 'NOT HEX' })).destination).toBe('');
  });

  it('mint and burn reject the fields their rules name', () => {
    expect(msg(variant('mint', { destination: hex64 }))).toBe('mint: must not have source or destination');
    expect(msg(variant('mint', { source: hex64 }))).toBe('mint: must not have source or destination');
    expect(msg(variant('mint', { memo: 'hi' }))).toBe('mint: memo not allowed');
    expect(msg(variant('burn_xe_with_memo', { destination: hex64 }))).toBe('burn: must not have source or destination');
    expect(msg(variant('burn_xe_with_memo', { source: hex64 }))).toBe('burn: must not have source or destination');
  });

  it('attestation count and duplicate keys', () => {
    const att = ((baseVector('lease_accept').block as Obj).attestations as Obj[])[0] as Obj;
    const many = Array.from({ length: 21 }, (_, i) => ({ ...att, public_key: i.toString(16).padStart(64, '0') }));
    expect(msg(variant('lease_accept', { attestations: many }))).toBe('too many attestations: 21 exceeds max 20');
    expect(msg(variant('lease_settle', { attestations: [att, att] }))).toBe('duplicate attestation key 8a88e3dd7409');
  });

  it('keeps pub_key for §7.2 even where it does not apply', () => {
    const v = variant('send_xe_with_memo', { pub_key: keyOf('dev1') });
    expect(load(v).pub_key).toBe(keyOf('dev1'));
  });
});

describe('verify step (§7.2, §7.4)', () => {
  const network = 'devnet';

  /** Re-hash (and, for a single-key block, re-sign with `seed`) a modified block. */
  function resign(block: Block, seed?: Uint8Array): Block {
    const b = { ...block };
    b.hash = computeBlockHash(b, network);
    if (seed) b.signature = signEd25519(seed, Buffer.from(b.hash, 'hex'));
    return b;
  }

  const verifyMsg = (b: Block) => ledgerError(() => verifyBlockIntrinsics(b, network)).message;

  it('multisig block must not declare pub_key', () => {
    const b = resign({ ...load(baseVector('multisig_open').block), pub_key: keyOf('dev3') });
    expect(verifyMsg(b)).toBe('verify: multisig block must not declare pub_key');
  });

  it('open block must declare pub_key', () => {
    const b = resign({ ...load(baseVector('open_receive_declares_key').block), pub_key: '' }, seedOf(6));
    expect(verifyMsg(b)).toBe('verify: open block must declare pub_key');
  });

  it('invalid pub_key shape (a block that skipped intake)', () => {
    const b = resign({ ...load(baseVector('open_receive_declares_key').block), pub_key: 'abcd' }, seedOf(6));
    expect(verifyMsg(b)).toBe('verify: invalid pub_key: must be 32 bytes of hex');
  });

  it('pub_key must derive account', () => {
    const b = resign({ ...load(baseVector('open_receive_declares_key').block), pub_key: keyOf('dev7') }, seedOf(7));
    expect(verifyMsg(b)).toBe(
      `verify: pub_key does not derive account address: derived ${accountAddress(keyOf('dev7'))}, account ${b.account}`,
    );
  });

  it('non-open block must not declare pub_key', () => {
    const b = resign({ ...load(baseVector('send_xe_with_memo').block), pub_key: keyOf('dev1') }, seedOf(1));
    expect(verifyMsg(b)).toBe('verify: non-open block must not declare pub_key');
  });

  it('opening block signature is checked under the declared key', () => {
    const b = resign(load(baseVector('open_receive_declares_key').block), seedOf(7));
    expect(verifyMsg(b)).toBe('verify: signature verification failed');
    const good = resign(load(baseVector('open_receive_declares_key').block), seedOf(6));
    expect(() => verifyBlockIntrinsics(good, network)).not.toThrow();
  });

  it('a non-opening block signature is not checked here (stored credentials, §8)', () => {
    const b = { ...load(baseVector('send_xe_with_memo').block), signature: '00'.repeat(64) };
    expect(() => verifyBlockIntrinsics(b, network)).not.toThrow();
  });

  it('hash mismatch message', () => {
    const block = load(baseVector('mint').block);
    const changed = { ...block, amount: block.amount + 1n };
    expect(verifyMsg(changed)).toBe(`verify: hash mismatch: got ${block.hash}, want ${computeBlockHash(changed, network)}`);
  });
});

describe('encoding failures and memo rules', () => {
  const encodeMsg = (b: Block) => ledgerError(() => canonicalBytes(b)).message;
  const send = () => load(baseVector('send_xe_with_memo').block);

  it('memo too long, invalid UTF-8, control bytes', () => {
    expect(encodeMsg({ ...send(), memo: 'x'.repeat(65) })).toBe('verify: encode: memo too long: 65 bytes (max 64)');
    expect(encodeMsg({ ...send(), memo: 'é'.repeat(33) })).toBe('verify: encode: memo too long: 66 bytes (max 64)');
    expect(encodeMsg({ ...send(), memo: 'ok \ud800 lone' })).toBe('verify: encode: memo is not valid UTF-8');
    expect(encodeMsg({ ...send(), memo: 'x\udc00' })).toBe('verify: encode: memo is not valid UTF-8');
    expect(encodeMsg({ ...send(), memo: 'ab\u0001' })).toBe(
      'verify: encode: memo contains disallowed control byte 0x01 at offset 2',
    );
    expect(encodeMsg({ ...send(), memo: 'é\u007f' })).toBe(
      'verify: encode: memo contains disallowed control byte 0x7f at offset 2',
    );
    expect(memoError('tab\tand\nnewline ✓ 😀')).toBeUndefined();
    expect(memoError('x'.repeat(64))).toBeUndefined();
  });

  it('an absent and an empty memo encode identically; the length byte is present', () => {
    const b = load(baseVector('send_xusd_no_memo').block);
    const bytes = canonicalBytes(b);
    expect(bytes.length).toBe(163);
    expect(bytes[162]).toBe(0);
  });

  it('memo, timing fields, asset and hex failures on blocks that skipped intake', () => {
    const mint = load(baseVector('mint').block);
    expect(encodeMsg({ ...mint, memo: 'x' })).toBe('verify: encode: memo not allowed on mint blocks');
    expect(encodeMsg({ ...mint, lease_settle_grace_ns: 1n })).toBe(
      'verify: encode: lease-timing fields not allowed on mint blocks',
    );
    expect(encodeMsg({ ...mint, asset: 'TOOLONGXX' })).toBe('verify: encode: asset too long: 9 bytes (max 8)');
    expect(encodeMsg({ ...mint, representative: 'ABC' })).toBe('verify: encode: representative must be 32 bytes of hex');
    expect(encodeMsg({ ...mint, previous: '' })).toBe('verify: encode: previous must be 32 bytes of hex');
    expect(encodeMsg({ ...mint, account: 'zz' })).toBe('verify: encode: account must be 32 bytes of hex');
  });

  it('a genesis without timing has no tail (122 bytes)', () => {
    const g = load(baseVector('genesis', '').block);
    const plain = { ...g, lease_min_duration_secs: 0n, lease_settle_grace_ns: 0n, lease_force_settle_gap_ns: 0n,
      lease_escrow_expiry_ns: 0n, lease_archive_gap_ns: 0n, max_attestation_skew_ns: 0n };
    expect(canonicalBytes(plain).length).toBe(122);
    expect(canonicalBytes(g).length).toBe(170);
  });

  it('attestation order is not bound, the set is', () => {
    const v = baseVector('lease_accept');
    const block = load(v.block);
    const extra = { public_key: '00'.repeat(32), timestamp: 5n, signature: '11'.repeat(64) };
    const a = computeBlockHash({ ...block, attestations: [extra, ...block.attestations] }, 'devnet');
    const b = computeBlockHash({ ...block, attestations: [...block.attestations, extra] }, 'devnet');
    expect(a).toBe(b);
    expect(a).not.toBe(v.hash);
  });
});

describe('a freshly signed block round-trips', () => {
  it('sign, solve pow, emit, parse, verify', () => {
    const seed = seedOf(8);
    const pub = publicKeyFromSeed(seed);
    const src = baseVector('send_xe_with_memo').hash as string;
    const draft = {
      ...parseBlockJson({ type: 'receive', account: accountAddress(pub), previous: '0', balance: 5n,
        timestamp: 1800000000000000000n, asset: 'XE', source: src, pub_key: pub }),
    };
    draft.hash = computeBlockHash(draft, 'devnet');
    draft.signature = signEd25519(seed, Buffer.from(draft.hash, 'hex'));
    draft.pow_nonce = solvePow(draft.hash, 0xffff000000000000n);
    const text = stringifyJson(blockToJson(draft));
    const again = load(parseJson(text));
    verifyBlockIntrinsics(again, 'devnet');
    expect(powValue(again.pow_nonce, again.hash) >= 0xffff000000000000n).toBe(true);
    expect(stringifyJson(blockToJson(again))).toBe(text);
  });
});
