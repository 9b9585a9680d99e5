import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJson, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';
import { BodyShapeError, parseAttestationJson } from '../../ledger/codec/block.js';
import {
  attestationMerkleRoot,
  certificateHash,
  certificateToJson,
  checkCertificateContent,
  parseCertificateJson,
  runCertificateWorkload,
} from '../../ledger/certificates/codec.js';
import { signEd25519, verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import { LedgerError } from '../../ledger/errors.js';
import type { Certificate } from '../../ledger/types.js';

type Obj = Record<string, JsonValue>;
const vectors = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as Obj;
const certVectors = vectors.certificate_vectors as Obj[];
const dev1Seed = new Uint8Array(32).fill(1);
const DEVNET_ITERATIONS = 1_000_000n;

function contentError(c: Certificate, network: string): string {
  try {
    checkCertificateContent(c, network, DEVNET_ITERATIONS);
  } catch (e) {
    expect(e).toBeInstanceOf(LedgerError);
    expect((e as LedgerError).code).toBe('invalid');
    return (e as Error).message;
  }
  throw new Error('expected a content check failure');
}

/** Re-hash and re-sign a modified certificate so only the intended rule fails. */
function resign(c: Certificate, network: string): Certificate {
  const hash = certificateHash(c, network);
  return { ...c, hash, signature: signEd25519(dev1Seed, Buffer.from(hash, 'hex')) };
}

describe('certificate vectors', () => {
  for (const v of certVectors) {
    const network = v.network_id as string;
    it(`network "${network}": hash, signature, score bits, roots, round trip, content check`, () => {
      const c = parseCertificateJson(v.certificate);
      expect(certificateHash(c, network)).toBe(c.hash);
      expect(verifyEd25519(c.provider_pub_key, Buffer.from(c.hash, 'hex'), c.signature)).toBe(true);
      expect(signEd25519(dev1Seed, Buffer.from(c.hash, 'hex'))).toBe(c.signature);
      const bits = Buffer.alloc(8);
      bits.writeDoubleBE(c.score);
      expect(bits.toString('hex')).toBe(v.score_ieee754_hex);
      const start = (v.start_attestations as JsonValue[]).map((a) => parseAttestationJson(a));
      const end = (v.end_attestations as JsonValue[]).map((a) => parseAttestationJson(a));
      expect(attestationMerkleRoot(start)).toBe(c.start_attestation_root);
      expect(attestationMerkleRoot(end)).toBe(c.end_attestation_root);
      expect(stringifyJson(certificateToJson(c))).toBe(stringifyJson(v.certificate));
      expect(parseCertificateJson(parseJson(stringifyJson(certificateToJson(c))))).toEqual(c);
      checkCertificateContent(c, network, DEVNET_ITERATIONS);
    });
  }

  it('the hash binds the network id', () => {
    const c = parseCertificateJson(certVectors[0]!.certificate);
    expect(certificateHash(c, 'othernet')).not.toBe(c.hash);
    expect(contentError(c, 'othernet')).toBe(`certificate: hash mismatch: got ${c.hash}, want ${certificateHash(c, 'othernet')}`);
  });

  it('devnet benchmark intermediates', () => {
    const v = certVectors[0]!;
    const bench = v.benchmark as Obj;
    const c = parseCertificateJson(v.certificate);
    const out = runCertificateWorkload(c.seed, {
      iterations: bench.iterations as bigint,
      tableEntries: Number(bench.table_entries as bigint),
      memoryReads: Number(bench.memory_reads as bigint),
    });
    expect(out).toEqual({ cpu_hash: bench.cpu_hash, memory_proof: bench.memory_proof, work_proof: bench.work_proof });
    expect(out.work_proof).toBe(c.work_proof);
  }, 60_000);
});

describe('attestation Merkle roots', () => {
  for (const [i, v] of (vectors.merkle_root_vectors as Obj[]).entries()) {
    it(`vector ${i} (${(v.attestations as JsonValue[]).length} attestations)`, () => {
      const atts = (v.attestations as JsonValue[]).map((a) => parseAttestationJson(a));
      expect(attestationMerkleRoot(atts)).toBe(v.root);
      expect(attestationMerkleRoot([...atts].reverse())).toBe(v.root);
    });
  }

  it('carries an unpaired node up unchanged (3 leaves = hash(hash(l0,l1), l2))', () => {
    const v = (vectors.merkle_root_vectors as Obj[])[2]!;
    const leaves = (v.leaves_sorted as string[]).map((h) => Buffer.from(h, 'hex'));
    const node = (l: Buffer, r: Buffer) => createHash('sha256').update(Buffer.of(1)).update(l).update(r).digest();
    expect(node(node(leaves[0]!, leaves[1]!), leaves[2]!).toString('hex')).toBe(v.root);
  });
});

describe('content check rejections', () => {
  const network = 'devnet';
  const base = () => parseCertificateJson(certVectors[0]!.certificate);

  it('hex shapes (uppercase rejected)', () => {
    expect(contentError({ ...base(), seed: base().seed.toUpperCase() }, network)).toBe(
      'certificate: invalid seed: must be 64 lowercase hex characters',
    );
    expect(contentError({ ...base(), signature: 'ab' }, network)).toBe(
      'certificate: invalid signature: must be 128 lowercase hex characters',
    );
  });

  it('provider_pub_key must derive provider', () => {
    const other = '5657946ae205cee9f5dffeef6750d3990be3668e31d049f10485a2cef7ee0ddf';
    expect(contentError(resign({ ...base(), provider: other }, network), network)).toMatch(
      /^certificate: provider_pub_key does not derive provider: derived 978389961ea1/,
    );
  });

  it('signature must verify', () => {
    const c = base();
    expect(contentError({ ...c, signature: signEd25519(new Uint8Array(32).fill(2), Buffer.from(c.hash, 'hex')) }, network)).toBe(
      'certificate: signature verification failed',
    );
  });

  it('score, workload version, iterations, multiplier', () => {
    expect(contentError(resign({ ...base(), score: 0 }, network), network)).toBe(
      'certificate: score must be a finite number > 0',
    );
    expect(contentError(resign({ ...base(), score: -1 }, network), network)).toBe(
      'certificate: score must be a finite number > 0',
    );
    expect(contentError(resign({ ...base(), workload_version: 2n }, network), network)).toBe(
      'certificate: workload_version must be 3, got 2',
    );
    expect(contentError(resign({ ...base(), iterations: 375_000_000n }, network), network)).toBe(
      'certificate: iterations must be 1000000, got 375000000',
    );
    expect(contentError(resign({ ...base(), price_multiplier_milli: 499n }, network), network)).toBe(
      'certificate: price_multiplier_milli 499 out of range 500..10000',
    );
    expect(contentError(resign({ ...base(), price_multiplier_milli: 10_001n }, network), network)).toBe(
      'certificate: price_multiplier_milli 10001 out of range 500..10000',
    );
    expect(() => checkCertificateContent(resign({ ...base(), price_multiplier_milli: 10_000n }, network), network, DEVNET_ITERATIONS)).not.toThrow();
  });
});

describe('certificate JSON shapes', () => {
  const json = () => ({ ...(certVectors[0]!.certificate as Obj) });

  it.each([
    ['quoted integer', { iterations: '1000000' }],
    ['fractional integer', { start_median: 1.5 }],
    ['negative u64', { price_multiplier_milli: -1n }],
    ['string score', { score: '0.4' }],
    ['numeric hex', { seed: 5n }],
  ])('%s is a body shape error', (_l, patch) => {
    expect(() => parseCertificateJson({ ...json(), ...(patch as Obj) })).toThrow(BodyShapeError);
  });

  it('an integer-valued score parses as a number and emits without a fraction', () => {
    const c = parseCertificateJson({ ...json(), score: 2n });
    expect(c.score).toBe(2);
    expect(stringifyJson(certificateToJson(c))).toContain('"score":2,');
  });

  it('non-object input is a shape error', () => {
    expect(() => parseCertificateJson(null)).toThrow(BodyShapeError);
  });
});
