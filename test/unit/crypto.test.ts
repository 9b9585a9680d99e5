import { verify as nodeVerify, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import * as noble from '@noble/ed25519';
import { parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { bytesToHex } from '../../ledger/codec/hex.js';
import { ByteWriter } from '../../ledger/codec/bytes.js';
import { formatDuration } from '../../ledger/codec/duration.js';
import {
  publicKeyFromSeed,
  signEd25519,
  verifyEd25519,
  verifyEd25519Noble,
} from '../../ledger/crypto/ed25519.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { formatDifficulty, parseDifficulty, powValid, powValue, solvePow } from '../../ledger/crypto/pow.js';
import { keysetBytes, multisigAddress, validateKeyset } from '../../ledger/crypto/multisig.js';
import {
  attestationPayload,
  lowerMedian,
  signAttestation,
  verifyAttestation,
} from '../../ledger/crypto/attestation.js';
import { signVote, signVoteOnDemand, verifyVote, voteBytes, voteSigner, type Vote } from '../../ledger/crypto/vote.js';
import { LedgerError } from '../../ledger/errors.js';
import type { Keyset } from '../../ledger/types.js';

type Obj = Record<string, JsonValue>;
const vectors = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as Obj;
const devKeys = vectors.dev_keys as Obj[];
const seedOf = (name: string) => Buffer.from(devKeys.find((k) => k.name === name)!.seed_hex as string, 'hex');
const toKeyset = (o: Obj): Keyset => ({ keys: o.keys as string[], threshold: Number(o.threshold as bigint) });
const ED25519_L = (1n << 252n) + 27742317777372353535851937790883648493n;

describe('dev keys', () => {
  for (const k of devKeys) {
    it(`${k.name}: seed → public key → address`, () => {
      const seed = Buffer.from(k.seed_hex as string, 'hex');
      expect(publicKeyFromSeed(seed)).toBe(k.public_key);
      expect(accountAddress(k.public_key as string)).toBe(k.address);
      expect(bytesToHex(noble.getPublicKey(seed))).toBe(k.public_key);
    });
  }
});

describe('ed25519', () => {
  const seed = seedOf('dev1');
  const pub = publicKeyFromSeed(seed);
  const msg = Buffer.from('hello');

  it('node:crypto and noble produce identical signatures and both verify them', () => {
    const sig = signEd25519(seed, msg);
    expect(bytesToHex(noble.sign(msg, seed))).toBe(sig);
    expect(verifyEd25519(pub, msg, sig)).toBe(true);
    expect(verifyEd25519Noble(pub, msg, sig)).toBe(true);
    expect(verifyEd25519(pub, Buffer.from('hellO'), sig)).toBe(false);
    expect(verifyEd25519Noble(pub, Buffer.from('hellO'), sig)).toBe(false);
  });

  it('malformed input is false, never a throw', () => {
    const sig = signEd25519(seed, msg);
    expect(verifyEd25519(pub.toUpperCase(), msg, sig)).toBe(false);
    expect(verifyEd25519(pub, msg, sig.toUpperCase())).toBe(false);
    expect(verifyEd25519(pub.slice(2), msg, sig)).toBe(false);
    expect(verifyEd25519(pub, msg, sig.slice(2))).toBe(false);
    expect(verifyEd25519('', msg, '')).toBe(false);
    expect(verifyEd25519Noble('zz'.repeat(32), msg, sig)).toBe(false);
    // y = 2: not on the curve, so no point decodes from it
    const offCurve = '02' + '00'.repeat(31);
    expect(verifyEd25519(offCurve, msg, sig)).toBe(false);
    expect(verifyEd25519Noble(offCurve, msg, sig)).toBe(false);
  });

  it('non-canonical S (S + L) is rejected by both libraries', () => {
    const sig = Buffer.from(signEd25519(seed, msg), 'hex');
    const s = BigInt('0x' + Buffer.from(sig.subarray(32)).reverse().toString('hex'));
    const malleable = Buffer.from((s + ED25519_L).toString(16).padStart(64, '0'), 'hex').reverse();
    const forged = Buffer.concat([sig.subarray(0, 32), malleable]).toString('hex');
    expect(verifyEd25519(pub, msg, forged)).toBe(false);
    expect(verifyEd25519Noble(pub, msg, forged)).toBe(false);
    // noble's default ZIP-215 mode agrees on S too (it is the R/A encodings where the modes differ)
    expect(noble.verify(Buffer.from(forged, 'hex'), msg, Buffer.from(pub, 'hex'))).toBe(false);
  });

  it('non-canonical public key encoding (y ≥ p) is rejected by both', () => {
    // the identity point's y = 1 written as p + 1 = 2^255 − 18
    const nonCanonical = 'ee' + 'ff'.repeat(30) + '7f';
    const sig = signEd25519(seed, msg);
    expect(verifyEd25519(nonCanonical, msg, sig)).toBe(false);
    expect(verifyEd25519Noble(nonCanonical, msg, sig)).toBe(false);
  });
});

describe('ed25519: consensus verification is OpenSSL\'s; the noble wallet check refuses small-order points', () => {
  const seed = seedOf('dev1');
  const msg = Buffer.from('torsion');
  const ext = noble.utils.getExtendedPublicKey(seed);
  const B = noble.Point.BASE;
  // a point of order 8
  const T8 = noble.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', false);
  const le = (b: Uint8Array) => BigInt('0x' + Buffer.from(b).reverse().toString('hex'));
  const leBytes = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse();
  const mod = (n: bigint) => ((n % ED25519_L) + ED25519_L) % ED25519_L;
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  /** Raw OpenSSL verdict, without the wrapper's key filter. */
  const openssl = (pub: Uint8Array, sig: Uint8Array) =>
    nodeVerify(null, msg, createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]), format: 'der', type: 'spki' }), sig);
  /** A signature with nonce point R (and public key A) chosen by the signer, scalar a. */
  function forge(R: noble.Point, A: noble.Point, a: bigint, r: bigint): Buffer {
    const k = mod(le(sha512(Buffer.concat([R.toBytes(), A.toBytes(), msg]))));
    return Buffer.concat([R.toBytes(), leBytes(mod(r + k * a))]);
  }

  it('T8 really has order 8', () => {
    expect(T8.isSmallOrder()).toBe(true);
    expect(T8.double().double().is0()).toBe(false);
  });

  it('small-order public key: the node verifies exactly as OpenSSL (accepts); the noble check refuses', () => {
    const identity = Buffer.from('01' + '00'.repeat(31), 'hex');
    const sig = Buffer.concat([identity, Buffer.alloc(32)]);
    expect(openssl(identity, sig)).toBe(true);
    expect(verifyEd25519(hex(identity), msg, hex(sig))).toBe(true);
    expect(verifyEd25519Noble(hex(identity), msg, hex(sig))).toBe(false);
    const order2 = Buffer.from('ec' + 'ff'.repeat(30) + '7f', 'hex');
    expect(openssl(order2, sig)).toBe(true);
    expect(verifyEd25519(hex(order2), msg, hex(sig))).toBe(true);
    expect(verifyEd25519Noble(hex(order2), msg, hex(sig))).toBe(false);
  });

  it('mixed-order R under an honest key: OpenSSL and the node reject; the noble check rejects too', () => {
    const r = 123456789n;
    const R = B.multiply(r).add(T8);
    const sig = forge(R, ext.point, ext.scalar, r);
    expect(openssl(ext.pointBytes, sig)).toBe(false);
    expect(noble.verify(sig, msg, ext.pointBytes, { zip215: false })).toBe(true);
    expect(verifyEd25519(hex(ext.pointBytes), msg, hex(sig))).toBe(false);
    expect(verifyEd25519Noble(hex(ext.pointBytes), msg, hex(sig))).toBe(false);
  });

  it('mixed-order public key: OpenSSL and the node reject; the noble check rejects too', () => {
    const A = ext.point.add(T8);
    // pick a nonce whose challenge is not a multiple of 8, so the torsion part does not vanish
    let r = 1n;
    for (;;) {
      const k = mod(le(sha512(Buffer.concat([B.multiply(r).toBytes(), A.toBytes(), msg]))));
      if (k % 8n !== 0n) break;
      r++;
    }
    const sig = forge(B.multiply(r), A, ext.scalar, r);
    expect(openssl(A.toBytes(), sig)).toBe(false);
    expect(noble.verify(sig, msg, A.toBytes(), { zip215: false })).toBe(true);
    expect(verifyEd25519(hex(A.toBytes()), msg, hex(sig))).toBe(false);
    expect(verifyEd25519Noble(hex(A.toBytes()), msg, hex(sig))).toBe(false);
  });

  it('an honestly forged-by-the-owner signature (plain R, honest key) passes both', () => {
    const r = 987654321n;
    const sig = forge(B.multiply(r), ext.point, ext.scalar, r);
    expect(verifyEd25519(hex(ext.pointBytes), msg, hex(sig))).toBe(true);
    expect(verifyEd25519Noble(hex(ext.pointBytes), msg, hex(sig))).toBe(true);
  });
});

describe('multisig keysets', () => {
  for (const v of vectors.multisig_address_vectors as Obj[]) {
    it(`${v.note}`, () => {
      const ks = toKeyset(v.keyset as Obj);
      validateKeyset(ks);
      expect(bytesToHex(keysetBytes(ks))).toBe(v.keyset_bytes_hex);
      expect(multisigAddress(ks)).toBe(v.address);
    });
  }

  it('a 1-of-1 keyset address differs from the single-key address', () => {
    const k = devKeys[6]!.public_key as string;
    expect(multisigAddress({ keys: [k], threshold: 1 })).not.toBe(accountAddress(k));
  });

  const keyErr = (ks: Keyset) => {
    try {
      validateKeyset(ks);
    } catch (e) {
      expect(e).toBeInstanceOf(LedgerError);
      expect((e as LedgerError).code).toBe('invalid');
      return (e as Error).message;
    }
    throw new Error('expected a keyset error');
  };
  const k = (i: number) => i.toString(16).padStart(64, '0');

  it('keyset errors', () => {
    expect(keyErr({ keys: [], threshold: 1 })).toBe('keyset: no keys');
    expect(keyErr({ keys: Array.from({ length: 257 }, (_, i) => k(i)), threshold: 1 })).toBe(
      'keyset: too many keys: 257 (max 256)',
    );
    expect(keyErr({ keys: [k(1), k(2)], threshold: 0 })).toBe('keyset: threshold 0 out of range 1..2');
    expect(keyErr({ keys: [k(1), k(2)], threshold: 3 })).toBe('keyset: threshold 3 out of range 1..2');
    expect(keyErr({ keys: [k(1), k(2).toUpperCase().replace(/^0/, 'A')], threshold: 1 })).toBe(
      'keyset: key 1 must be 64 hex characters',
    );
    expect(keyErr({ keys: [k(1), 'abc'], threshold: 1 })).toBe('keyset: key 1 must be 64 hex characters');
    expect(keyErr({ keys: [k(1), k(2), k(1)], threshold: 1 })).toBe(`keyset: duplicate key ${k(1).slice(0, 12)}`);
    expect(() => validateKeyset({ keys: Array.from({ length: 256 }, (_, i) => k(i)), threshold: 256 })).not.toThrow();
  });
});

describe('proof of work', () => {
  for (const [i, v] of (vectors.pow_vectors as Obj[]).entries()) {
    it(`vector ${i}: nonce ${v.nonce}`, () => {
      const nonce = v.nonce as bigint;
      expect(powValue(nonce, v.hash as string)).toBe(v.pow_value);
      expect(powValue(nonce, v.hash as string).toString(16).padStart(16, '0')).toBe(v.pow_value_hex);
      for (const [d, valid] of Object.entries(v.valid_at as Obj)) {
        expect(powValid(nonce, v.hash as string, parseDifficulty(d))).toBe(valid);
      }
      expect(powValid(nonce, v.hash as string, 0n)).toBe(true);
    });
  }

  it('solvePow finds the smallest valid nonce from the start', () => {
    const hash = (vectors.pow_vectors as Obj[])[0]!.hash as string;
    const d = 0xff00000000000000n;
    const n = solvePow(hash, d);
    expect(powValid(n, hash, d)).toBe(true);
    for (let i = 0n; i < n; i++) expect(powValid(i, hash, d)).toBe(false);
    expect(solvePow(hash, d, n + 1n)).toBeGreaterThan(n);
  });

  it('difficulty text', () => {
    const d = vectors.difficulties as Obj;
    expect(formatDifficulty(parseDifficulty(d.block_default as string))).toBe('fffff80000000000');
    expect(formatDifficulty(parseDifficulty(d.devnet_block as string))).toBe('2');
    expect(formatDifficulty(0n)).toBe('0');
    expect(parseDifficulty('ffffc00000000000')).toBe(0xffffc00000000000n);
    expect(parseDifficulty('0x2')).toBe(2n);
    for (const bad of ['', '0x', 'xyz', '0x1ffffffffffffffff', '-1', ' 2']) {
      expect(() => parseDifficulty(bad)).toThrow();
    }
  });
});

describe('attestations', () => {
  for (const v of vectors.attestation_vectors as Obj[]) {
    it(`${v.note}`, () => {
      const id = v.identifier as string;
      const ts = v.timestamp as bigint;
      expect(bytesToHex(attestationPayload(id, ts))).toBe(v.payload_hex);
      const a = signAttestation(seedOf(v.signer as string), id, ts);
      expect(a).toEqual({ public_key: v.public_key, timestamp: ts, signature: v.signature });
      expect(verifyAttestation(a, id)).toBe(true);
      expect(verifyAttestation({ ...a, timestamp: ts + 1n }, id)).toBe(false);
      expect(verifyAttestation(a, id.replace(/^./, id[0] === '0' ? '1' : '0'))).toBe(false);
    });
  }

  it('lower median vectors', () => {
    for (const v of vectors.lower_median_vectors as Obj[]) {
      expect(lowerMedian(v.timestamps as bigint[])).toBe(v.lower_median);
    }
    expect(() => lowerMedian([])).toThrow();
  });
});

describe('votes', () => {
  for (const [i, v] of (vectors.vote_vectors as Obj[]).entries()) {
    it(`vector ${i}`, () => {
      const vote = v.vote as unknown as Vote;
      const { signature, ...unsigned } = vote;
      const bytes = voteBytes(unsigned);
      expect(bytes.length).toBe(138);
      expect(bytesToHex(bytes)).toBe(v.signed_bytes_hex);
      expect(signVote(seedOf(v.signer as string), unsigned).signature).toBe(signature);
      const onDemand = signVoteOnDemand(voteSigner(seedOf(v.signer as string)), unsigned);
      expect(onDemand.signature).toBe(signature);
      expect(() => signVoteOnDemand(voteSigner(new Uint8Array(32).fill(0xee)), unsigned)).toThrow('vote rep_pub_key is not the signing key');
      expect(verifyVote({ ...onDemand })).toBe(true);
      expect(verifyVote(vote)).toBe(true);
      expect(verifyVote({ ...vote, final: !vote.final })).toBe(false);
      expect(verifyVote({ ...vote, conflict_previous: 'x' })).toBe(false);
      expect(verifyVote({ ...vote, block_hash: vote.block_hash.toUpperCase() })).toBe(false);
    });
  }
});

describe('duration strings (§11.1)', () => {
  it.each([
    [0n, '0s'],
    [3_600_000_000_001n, '1h0m0.000000001s'],
    [10_000_000_000_000n, '2h46m40s'],
    [-5_400_000_000_000n, '-1h30m0s'],
    [1_500_000n, '1.5ms'],
    [1n, '1ns'],
    [-999n, '-999ns'],
    [1_000n, '1µs'],
    [1_500n, '1.5µs'],
    [999_999_999n, '999.999999ms'],
    [1_000_000_000n, '1s'],
    [61_250_000_000n, '1m1.25s'],
    [-3_600_000_000_000n, '-1h0m0s'],
    [-9223372036854775808n, '-2562047h47m16.854775808s'],
    [9223372036854775807n, '2562047h47m16.854775807s'],
  ])('%s ns → %s', (ns, text) => {
    expect(formatDuration(ns)).toBe(text);
  });
});

describe('ByteWriter', () => {
  it('grows past its initial capacity without losing bytes', () => {
    const w = new ByteWriter(2);
    w.u8(1).u16be(0x0203).u32be(0x04050607).u64be(0x08090a0b0c0d0e0fn).i64be(-1n).u64le(1n).lp8('ab').lp4('c');
    w.rawHex('ff00').zeros(2);
    expect(bytesToHex(w.finish())).toBe(
      '01' + '0203' + '04050607' + '08090a0b0c0d0e0f' + 'ffffffffffffffff' + '0100000000000000' +
        '00000000000000026162' + '0000000163' + 'ff00' + '0000',
    );
    expect(w.length).toBe(50);
  });

  it('rejects out-of-range integers', () => {
    expect(() => new ByteWriter().u64be(-1n)).toThrow(RangeError);
    expect(() => new ByteWriter().u64be(1n << 64n)).toThrow(RangeError);
    expect(() => new ByteWriter().i64be(1n << 63n)).toThrow(RangeError);
    expect(new ByteWriter().i64be(-(1n << 63n)).finish()[0]).toBe(0x80);
  });
});
