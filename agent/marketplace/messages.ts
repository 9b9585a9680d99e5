// Signed marketplace messages (provider.md §3): advertisement, request, offer. Every field enters the
// pre-image as text (hex as ASCII, numbers as decimal) with 8-byte lengths, under a per-kind tag.
import { createHash } from 'node:crypto';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { ByteWriter, U64_MAX, I64_MIN, I64_MAX } from '../../ledger/codec/bytes.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed, signEd25519, verifyEd25519 } from '../../ledger/crypto/ed25519.js';

export interface Advertisement {
  provider: string;
  provider_pub_key: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  max_concurrent_leases: bigint;
  timestamp: bigint;
  signature: string;
}

export interface LeaseRequestMessage {
  consumer: string;
  consumer_pub_key: string;
  request_id: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  timestamp: bigint;
  signature: string;
}

export interface Offer {
  provider: string;
  provider_pub_key: string;
  request_id: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  total_cost: bigint;
  certificate_hash: string;
  timestamp: bigint;
  signature: string;
}

export type MarketplaceMessage =
  | { type: 'advertisement'; ad: Advertisement }
  | { type: 'request'; request: LeaseRequestMessage }
  | { type: 'offer'; offer: Offer };

export type MarketplaceKind = MarketplaceMessage['type'];

type FieldKind = 'hex' | 'text' | 'u64' | 'i64';

/** Signing order of each kind; the first two fields are the signer's address and key. */
const FIELDS: Record<MarketplaceKind, readonly (readonly [string, FieldKind])[]> = {
  advertisement: [
    ['provider', 'hex'], ['provider_pub_key', 'hex'], ['vcpus', 'u64'], ['memory_mb', 'u64'], ['disk_gb', 'u64'],
    ['max_concurrent_leases', 'u64'], ['timestamp', 'i64'],
  ],
  request: [
    ['consumer', 'hex'], ['consumer_pub_key', 'hex'], ['request_id', 'text'], ['vcpus', 'u64'], ['memory_mb', 'u64'],
    ['disk_gb', 'u64'], ['duration', 'u64'], ['timestamp', 'i64'],
  ],
  offer: [
    ['provider', 'hex'], ['provider_pub_key', 'hex'], ['request_id', 'text'], ['vcpus', 'u64'], ['memory_mb', 'u64'],
    ['disk_gb', 'u64'], ['duration', 'u64'], ['total_cost', 'u64'], ['certificate_hash', 'hex'], ['timestamp', 'i64'],
  ],
};

type Signed<K extends MarketplaceKind> = K extends 'advertisement' ? Advertisement : K extends 'request' ? LeaseRequestMessage : Offer;
type Fields = Record<string, string | bigint>;

export function marketplacePreimage(kind: MarketplaceKind, networkId: string, message: Fields): Uint8Array {
  const w = new ByteWriter(512).utf8(`net/marketplace-${kind}/v1`).u8(0).lp8(networkId);
  for (const [name] of FIELDS[kind]) w.lp8(String(message[name]));
  return w.finish();
}

export function marketplaceDigest(kind: MarketplaceKind, networkId: string, message: Fields): Buffer {
  return createHash('sha256').update(marketplacePreimage(kind, networkId, message)).digest();
}

/** Sign a message with `seed`; the signer's address and key fields are filled from the seed. */
export function signMarketplace<K extends MarketplaceKind>(
  kind: K,
  seed: Uint8Array,
  networkId: string,
  unsigned: Omit<Signed<K>, 'signature' | 'provider' | 'provider_pub_key' | 'consumer' | 'consumer_pub_key'>,
): Signed<K> {
  const publicKey = publicKeyFromSeed(seed);
  const [addressField, keyField] = FIELDS[kind].map(([name]) => name) as [string, string];
  const message = { [addressField]: accountAddress(publicKey), [keyField]: publicKey, ...unsigned } as Fields;
  return { ...message, signature: signEd25519(seed, marketplaceDigest(kind, networkId, message)) } as unknown as Signed<K>;
}

/** Why a message must be dropped, or null: lowercase hex fields, key derives the signer, signature. */
export function marketplaceFailure(kind: MarketplaceKind, networkId: string, message: Fields): string | null {
  for (const [name, fieldKind] of FIELDS[kind]) {
    if (fieldKind === 'hex' && !isLowerHex(message[name], 64)) return `${name} must be 64 lowercase hex characters`;
  }
  if (!isLowerHex(message['signature'], 128)) return 'signature must be 128 lowercase hex characters';
  const [[addressField], [keyField]] = FIELDS[kind] as [[string, FieldKind], [string, FieldKind]];
  if (accountAddress(message[keyField] as string) !== message[addressField]) {
    return `public key does not derive ${addressField}`;
  }
  if (!verifyEd25519(message[keyField] as string, marketplaceDigest(kind, networkId, message), message['signature'] as string)) {
    return 'signature verification failed';
  }
  return null;
}

export class MarketplaceShapeError extends Error {}

/** Structural decode of a message of `kind` (every field required, with its JSON type and range). */
export function parseMarketplace<K extends MarketplaceKind>(kind: K, json: JsonValue): Signed<K> {
  if (!isJsonObject(json)) throw new MarketplaceShapeError(`${kind} must be a JSON object`);
  const out: Fields = {};
  for (const [name, fieldKind] of [...FIELDS[kind], ['signature', 'hex'] as const]) {
    const v = json[name];
    if (fieldKind === 'hex' || fieldKind === 'text') {
      if (typeof v !== 'string') throw new MarketplaceShapeError(`${name} must be a string`);
    } else {
      const [min, max] = fieldKind === 'u64' ? [0n, U64_MAX] : [I64_MIN, I64_MAX];
      if (typeof v !== 'bigint' || v < min || v > max) throw new MarketplaceShapeError(`${name} must be an integer in range`);
    }
    out[name] = v;
  }
  return out as unknown as Signed<K>;
}
