// libp2p peer ids in their base58btc multihash form: an identity multihash of a protobuf public key
// (≤ 42 bytes of key, "12D3KooW…" for ed25519) or a sha2-256 multihash ("Qm…").
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ALPHABET_INDEX = new Map([...ALPHABET].map((c, i) => [c, i]));
const MAX_PEER_ID_CHARS = 128;

function base58Decode(s: string): Uint8Array | null {
  let value = 0n;
  for (const c of s) {
    const digit = ALPHABET_INDEX.get(c);
    if (digit === undefined) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn));
    value >>= 8n;
  }
  for (const c of s) {
    if (c !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

function base58Encode(bytes: Uint8Array): string {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** True for a well-formed base58btc peer id (identity or sha2-256 multihash). */
export function isValidPeerId(s: string): boolean {
  if (s.length === 0 || s.length > MAX_PEER_ID_CHARS) return false;
  const mh = base58Decode(s);
  if (!mh || mh.length < 2) return false;
  const [code, length] = [mh[0], mh[1]];
  if (code === 0x00) return length === mh.length - 2 && length > 0 && length <= 42;
  if (code === 0x12) return length === 32 && mh.length === 34;
  return false;
}

/** The peer id of an ed25519 public key: identity multihash of the protobuf PublicKey{Ed25519, key}. */
export function peerIdFromEd25519PublicKey(publicKeyHex: string): string {
  const key = Buffer.from(publicKeyHex, 'hex');
  const protobuf = Buffer.concat([Buffer.from([0x08, 0x01, 0x12, key.length]), key]);
  return base58Encode(Buffer.concat([Buffer.from([0x00, protobuf.length]), protobuf]));
}
