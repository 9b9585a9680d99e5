// ed25519 (RFC 8032). node:crypto (OpenSSL) is the verifier on every consensus and hot path, as
// DECISIONS.md fixes it, so this node accepts exactly the signatures other OpenSSL-style nodes do
// (both reject non-canonical encodings and S ≥ L; OpenSSL checks the cofactorless equation).
// @noble/ed25519 serves wallets and key derivation; its verifier runs in strict RFC 8032 mode and
// additionally refuses small- and mixed-order points (where the cofactored and cofactorless
// equations can disagree). Honestly generated keys and signatures pass both.
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { isLowerHex } from '../codec/hex.js';

noble.hashes.sha512 = sha512;

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Keeps the recently used entries, at most `capacity`: two generations of half that, a hit in the
 * older one copied into the newer one, and a full newer generation becoming the older one (whose
 * entries are dropped). A hit costs one map lookup, where a strict LRU deletes and re-inserts the
 * entry (a verify worker looks a key up for every signature).
 */
class RecentCache<V> {
  private newer = new Map<string, V>();
  private older = new Map<string, V>();
  private readonly generation: number;

  constructor(capacity: number) {
    this.generation = Math.max(1, capacity >> 1);
  }

  get(key: string): V | undefined {
    const v = this.newer.get(key);
    if (v !== undefined) return v;
    const old = this.older.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: string, v: V): void {
    if (this.newer.size >= this.generation) {
      this.older = this.newer;
      this.newer = new Map();
    }
    this.newer.set(key, v);
  }
}

const publicKeyCache = new RecentCache<KeyObject | null>(32_768);
const privateKeyCache = new RecentCache<KeyObject>(64);

function privateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new RangeError('ed25519 seed must be 32 bytes');
  const id = Buffer.from(seed).toString('hex');
  let key = privateKeyCache.get(id);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    privateKeyCache.set(id, key);
  }
  return key;
}

/** True when a 32-byte encoding is a canonical, torsion-free point (the identity only if allowed). */
function strictPoint(bytes: Uint8Array, allowIdentity: boolean): boolean {
  try {
    const p = noble.Point.fromBytes(bytes, false);
    return p.isTorsionFree() && (allowIdentity || !p.is0());
  } catch {
    return false;
  }
}

/**
 * KeyObject for a 64-char lowercase hex key, or null when OpenSSL refuses the encoding. Consensus
 * verification is exactly OpenSSL's RFC 8032 check (DECISIONS.md "Crypto"), so every node of the
 * network accepts the same signatures; no extra point filter is applied here.
 */
function publicKeyObject(publicKeyHex: string): KeyObject | null {
  const cached = publicKeyCache.get(publicKeyHex);
  if (cached !== undefined) return cached;
  let key: KeyObject | null;
  try {
    // As a JWK, OpenSSL takes the raw key directly (EVP_PKEY_new_raw_public_key), where DER goes
    // through its decoder: ~2 µs instead of ~5 µs per new key, and the intake meets a new key for
    // every account it opens.
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') }, format: 'jwk' });
  } catch {
    key = null;
  }
  publicKeyCache.set(publicKeyHex, key);
  return key;
}

const publicKeyOfSeedCache = new RecentCache<string>(64);

/** Hex public key of a seed; cached, since the node derives its own key for every vote it signs. */
export function publicKeyFromSeed(seed: Uint8Array): string {
  const id = Buffer.from(seed).toString('hex');
  let pub = publicKeyOfSeedCache.get(id);
  if (pub === undefined) {
    const der = createPublicKey(privateKeyObject(seed)).export({ format: 'der', type: 'spki' });
    pub = der.subarray(SPKI_PREFIX.length).toString('hex');
    publicKeyOfSeedCache.set(id, pub);
  }
  return pub;
}

export function signEd25519(seed: Uint8Array, message: Uint8Array): string {
  return sign(null, message, privateKeyObject(seed)).toString('hex');
}

/** False on any malformed input (wrong length, uppercase, bad point); never throws. */
export function verifyEd25519(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!isLowerHex(publicKeyHex, 64) || !isLowerHex(signatureHex, 128)) return false;
  return verifyWithKey(publicKeyHex, message, Buffer.from(signatureHex, 'hex'));
}

/** An ed25519 signature over a digest given as hex (a block, lease or message hash: its raw bytes are signed). */
export function verifyHashSignature(publicKeyHex: string, hashHex: string, signatureHex: string): boolean {
  return verifyEd25519(publicKeyHex, Buffer.from(hashHex, 'hex'), signatureHex);
}

/** verifyEd25519 over raw bytes (a 32-byte key, a 64-byte signature); never throws. */
export function verifyEd25519Bytes(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  return verifyWithKey(Buffer.from(publicKey.buffer, publicKey.byteOffset, 32).toString('hex'), message, signature);
}

function verifyWithKey(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  const key = publicKeyObject(publicKeyHex);
  if (!key) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * The check through @noble/ed25519 in strict RFC 8032 mode (non-canonical S, R and A rejected, as
 * OpenSSL rejects them), with small-order and mixed-order points refused as well; never throws.
 * Pure JavaScript and much slower: for wallets, tests and benchmarks, never a consensus path.
 */
export function verifyEd25519Noble(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!isLowerHex(publicKeyHex, 64) || !isLowerHex(signatureHex, 128)) return false;
  const pub = Buffer.from(publicKeyHex, 'hex');
  const sig = Buffer.from(signatureHex, 'hex');
  if (!strictPoint(pub, false) || !strictPoint(sig.subarray(0, 32), true)) return false;
  try {
    return noble.verify(sig, message, pub, { zip215: false });
  } catch {
    return false;
  }
}
