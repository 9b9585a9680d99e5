// Performance certificates (leases.md §9): JSON codec, hash, attestation Merkle root, benchmark
// workload and the content check run on ingest.
import { createHash } from 'node:crypto';
import type { Attestation, Certificate } from '../types.js';
import { invalid } from '../errors.js';
import { isJsonObject, type JsonValue } from '../codec/json.js';
import { isLowerHex, ZERO_HASH } from '../codec/hex.js';
import { ByteWriter, U64_MAX, I64_MIN, I64_MAX } from '../codec/bytes.js';
import { BodyShapeError } from '../codec/block.js';
import { accountAddress } from '../crypto/address.js';
import { verifyHashSignature } from '../crypto/ed25519.js';

export const WORKLOAD_VERSION = 3n;
export const CERTIFICATE_VALIDITY_NS = 604_800_000_000_000n;
export const MIN_PRICE_MULTIPLIER_MILLI = 500n;
export const MAX_PRICE_MULTIPLIER_MILLI = 10_000n;

const CERT_TAG = Buffer.from('net/perf-certificate/v1\u0000', 'ascii');

type HexField = 'provider' | 'provider_pub_key' | 'seed' | 'work_proof' | 'start_attestation_root' |
  'end_attestation_root' | 'signature' | 'hash';
type U64Field = 'workload_version' | 'iterations' | 'price_multiplier_milli';
type I64Field = 'start_median' | 'end_median' | 'issued_at' | 'expires_at';

/** Emission order (§9.1) with each field's kind and, for hex fields, its length. */
const FIELDS: readonly (readonly [keyof Certificate, 'hex64' | 'hex128' | 'u64' | 'i64' | 'float'])[] = [
  ['provider', 'hex64'],
  ['provider_pub_key', 'hex64'],
  ['seed', 'hex64'],
  ['workload_version', 'u64'],
  ['iterations', 'u64'],
  ['work_proof', 'hex64'],
  ['score', 'float'],
  ['start_attestation_root', 'hex64'],
  ['end_attestation_root', 'hex64'],
  ['start_median', 'i64'],
  ['end_median', 'i64'],
  ['issued_at', 'i64'],
  ['expires_at', 'i64'],
  ['price_multiplier_milli', 'u64'],
  ['signature', 'hex128'],
  ['hash', 'hex64'],
];

function member(obj: { [key: string]: JsonValue }, key: string): JsonValue | undefined {
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return undefined;
  const v = obj[key];
  return v === null ? undefined : v;
}

/** Structural decode; missing numbers read 0 and missing strings "" (the content check rejects them). */
export function parseCertificateJson(json: JsonValue): Certificate {
  if (!isJsonObject(json)) throw new BodyShapeError('certificate must be a JSON object');
  const out: Record<string, unknown> = {};
  for (const [key, kind] of FIELDS) {
    const v = member(json, key);
    switch (kind) {
      case 'hex64':
      case 'hex128':
        if (v !== undefined && typeof v !== 'string') throw new BodyShapeError(`${key} must be a string`);
        out[key] = v ?? '';
        break;
      case 'u64':
      case 'i64': {
        const [min, max] = kind === 'u64' ? [0n, U64_MAX] : [I64_MIN, I64_MAX];
        if (v !== undefined && (typeof v !== 'bigint' || v < min || v > max)) {
          throw new BodyShapeError(`${key} must be an integer in range`);
        }
        out[key] = v ?? 0n;
        break;
      }
      case 'float':
        if (v !== undefined && typeof v !== 'number' && typeof v !== 'bigint') {
          throw new BodyShapeError(`${key} must be a number`);
        }
        out[key] = v === undefined ? 0 : Number(v);
        break;
    }
  }
  return out as unknown as Certificate;
}

/** §9.1 order; `score` as a JS number, so it prints in its shortest round-trip form. */
export function certificateToJson(c: Certificate): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key] of FIELDS) out[key] = c[key];
  return out;
}

function scoreBits(score: number): bigint {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(score, 0);
  return b.readBigUInt64BE(0);
}

/** §9.2 hash of every field but `hash` and `signature`. */
export function certificateHash(c: Omit<Certificate, 'hash' | 'signature'>, networkId: string): string {
  const w = new ByteWriter(512);
  w.bytes(CERT_TAG)
    .lp8(networkId)
    .lp8(c.provider)
    .lp8(c.provider_pub_key)
    .lp8(c.seed)
    .u64be(c.workload_version)
    .u64be(c.iterations)
    .lp8(c.work_proof)
    .u64be(scoreBits(c.score))
    .lp8(c.start_attestation_root)
    .lp8(c.end_attestation_root)
    .i64be(c.start_median)
    .i64be(c.end_median)
    .i64be(c.issued_at)
    .i64be(c.expires_at)
    .u64be(c.price_multiplier_milli);
  return createHash('sha256').update(w.finish()).digest('hex');
}

function merkleLeaf(a: Attestation): Buffer {
  const w = new ByteWriter(200);
  w.u8(0x00).utf8(a.public_key).i64be(a.timestamp).utf8(a.signature);
  return createHash('sha256').update(w.finish()).digest();
}

/** §9.3: leaves sorted by public_key; a node without a partner is carried up; empty → 64 zeros. */
export function attestationMerkleRoot(atts: Attestation[]): string {
  if (atts.length === 0) return ZERO_HASH;
  let level = [...atts]
    .sort((a, b) => (a.public_key < b.public_key ? -1 : a.public_key > b.public_key ? 1 : 0))
    .map(merkleLeaf);
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const right = level[i + 1];
      next.push(
        right === undefined
          ? level[i]!
          : createHash('sha256').update(Buffer.of(0x01)).update(level[i]!).update(right).digest(),
      );
    }
    level = next;
  }
  return level[0]!.toString('hex');
}

export interface WorkloadParams {
  iterations: bigint;
  tableEntries: number;
  memoryReads: number;
}

/** The §9.5 benchmark: iterated SHA-256, then a pointer-chasing walk over a hash table. */
export function runCertificateWorkload(
  seedHex: string,
  p: WorkloadParams,
): { cpu_hash: string; memory_proof: string; work_proof: string } {
  let state: Buffer = Buffer.from(seedHex, 'hex');
  for (let i = 0n; i < p.iterations; i++) state = createHash('sha256').update(state).digest();
  const cpuHash = state;

  const n = p.tableEntries;
  const table = Buffer.allocUnsafe(n * 32);
  const index = Buffer.alloc(8);
  for (let i = 0; i < n; i++) {
    index.writeBigUInt64BE(BigInt(i), 0);
    createHash('sha256').update(cpuHash).update(index).digest().copy(table, i * 32);
  }
  const bigN = BigInt(n);
  let idx = Number(cpuHash.readBigUInt64BE(0) % bigN);
  const h = createHash('sha256');
  for (let r = 0; r < p.memoryReads; r++) {
    const entry = table.subarray(idx * 32, idx * 32 + 32);
    h.update(entry);
    idx = Number(entry.readBigUInt64BE(0) % bigN);
  }
  const memoryProof = h.digest();
  const workProof = createHash('sha256').update(cpuHash).update(memoryProof).digest('hex');
  return { cpu_hash: cpuHash.toString('hex'), memory_proof: memoryProof.toString('hex'), work_proof: workProof };
}

/** leases.md §9.6 content check; throws LedgerError invalid naming the first problem. */
export function checkCertificateContent(c: Certificate, networkId: string, expectedIterations: bigint): void {
  for (const [key, kind] of FIELDS) {
    if (kind !== 'hex64' && kind !== 'hex128') continue;
    const n = kind === 'hex64' ? 64 : 128;
    if (!isLowerHex(c[key], n)) throw invalid(`certificate: invalid ${key}: must be ${n} lowercase hex characters`);
  }
  const computed = certificateHash(c, networkId);
  if (computed !== c.hash) throw invalid(`certificate: hash mismatch: got ${c.hash}, want ${computed}`);
  const derived = accountAddress(c.provider_pub_key);
  if (derived !== c.provider) {
    throw invalid(`certificate: provider_pub_key does not derive provider: derived ${derived}, provider ${c.provider}`);
  }
  if (!verifyHashSignature(c.provider_pub_key, c.hash, c.signature)) {
    throw invalid('certificate: signature verification failed');
  }
  if (!Number.isFinite(c.score) || !(c.score > 0)) throw invalid('certificate: score must be a finite number > 0');
  if (c.workload_version !== WORKLOAD_VERSION) {
    throw invalid(`certificate: workload_version must be ${WORKLOAD_VERSION}, got ${c.workload_version}`);
  }
  if (c.iterations !== expectedIterations) {
    throw invalid(`certificate: iterations must be ${expectedIterations}, got ${c.iterations}`);
  }
  if (c.price_multiplier_milli < MIN_PRICE_MULTIPLIER_MILLI || c.price_multiplier_milli > MAX_PRICE_MULTIPLIER_MILLI) {
    throw invalid(
      `certificate: price_multiplier_milli ${c.price_multiplier_milli} out of range ` +
        `${MIN_PRICE_MULTIPLIER_MILLI}..${MAX_PRICE_MULTIPLIER_MILLI}`,
    );
  }
}
