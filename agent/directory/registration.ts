// Directory registration record (chat-and-directory.md §8.1–§8.2): signing payload, signature,
// structural decode and the ordered verification with its exact messages.
import { createHash } from 'node:crypto';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { ByteWriter, I64_MAX, I64_MIN } from '../../ledger/codec/bytes.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed, signEd25519, verifyEd25519 } from '../../ledger/crypto/ed25519.js';

export interface Registration {
  account: string;
  pub_key: string;
  node_peer: string;
  timestamp: bigint;
  signature: string;
}

const TAG = Buffer.from('net/directory-registration/v1\u0000', 'ascii');
const MAX_NODE_PEER_CHARS = 128;
/** A registration may be at most this far ahead of the node's clock. */
export const MAX_FUTURE_SKEW_NS = 300_000_000_000n;

export class RegistrationShapeError extends Error {}

export function registrationPayload(networkId: string, r: Omit<Registration, 'signature'>): Uint8Array {
  return new ByteWriter(256)
    .bytes(TAG)
    .lp8(networkId)
    .lp8(r.account)
    .lp8(r.pub_key)
    .lp8(r.node_peer)
    .lp8(r.timestamp.toString())
    .finish();
}

export function registrationDigest(networkId: string, r: Omit<Registration, 'signature'>): Buffer {
  return createHash('sha256').update(registrationPayload(networkId, r)).digest();
}

/** A registration of the seed's own account for `nodePeer`. */
export function signRegistration(seed: Uint8Array, networkId: string, nodePeer: string, timestamp: bigint): Registration {
  const pub_key = publicKeyFromSeed(seed);
  const unsigned = { account: accountAddress(pub_key), pub_key, node_peer: nodePeer, timestamp };
  return { ...unsigned, signature: signEd25519(seed, registrationDigest(networkId, unsigned)) };
}

function str(obj: { [key: string]: JsonValue }, key: string): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new RegistrationShapeError(`${key} must be a string`);
  return v;
}

/** Structural decode; absent fields read as their zero value so verification can name them. */
export function parseRegistration(json: JsonValue): Registration {
  if (!isJsonObject(json)) throw new RegistrationShapeError('registration must be a JSON object');
  const ts = json['timestamp'];
  if (ts !== undefined && ts !== null && (typeof ts !== 'bigint' || ts < I64_MIN || ts > I64_MAX)) {
    throw new RegistrationShapeError('timestamp must be an integer in range');
  }
  return {
    account: str(json, 'account'),
    pub_key: str(json, 'pub_key'),
    node_peer: str(json, 'node_peer'),
    timestamp: typeof ts === 'bigint' ? ts : 0n,
    signature: str(json, 'signature'),
  };
}

export function registrationToJson(r: Registration): Registration {
  return { account: r.account, pub_key: r.pub_key, node_peer: r.node_peer, timestamp: r.timestamp, signature: r.signature };
}

export interface RegistrationContext {
  networkId: string;
  now: bigint;
  /** The account has a chain on this node. */
  isOpen(account: string): boolean;
}

/** §8.2 in order: the first failing message, or null when the registration is acceptable. */
export function registrationFailure(r: Registration, ctx: RegistrationContext): string | null {
  if (!r.account) return 'missing account';
  if (!r.pub_key) return 'missing pub_key';
  if (!r.node_peer) return 'missing node_peer';
  if (r.timestamp === 0n) return 'missing timestamp';
  if (!r.signature) return 'missing signature';
  if (!isLowerHex(r.account, 64)) return 'malformed registration: account must be 64 lowercase hex characters';
  if (!isLowerHex(r.pub_key, 64)) return 'malformed registration: pub_key must be 64 lowercase hex characters';
  if (!isLowerHex(r.signature, 128)) return 'malformed registration: signature must be 128 lowercase hex characters';
  if (r.node_peer.length > MAX_NODE_PEER_CHARS) return 'malformed registration: node_peer too long';
  if (accountAddress(r.pub_key) !== r.account) {
    return `registration key: public key does not derive account ${r.account}`;
  }
  if (!verifyEd25519(r.pub_key, registrationDigest(ctx.networkId, r), r.signature)) return 'signature verification failed';
  if (r.timestamp - ctx.now > MAX_FUTURE_SKEW_NS) return 'registration timestamp is in the future';
  if (!ctx.isOpen(r.account)) return 'registration account is not open on the ledger';
  return null;
}
