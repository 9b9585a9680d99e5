// Read challenges and ownership proofs (chat-and-directory.md §5): 56-byte challenges bound to this
// process by an HMAC, valid 120 s, single use; chat read proofs (§5.3) and VM read proofs (§5.5).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import { ChatError } from './errors.js';

export const CHALLENGE_TTL_NS = 120_000_000_000n;
const CHAT_READ_TAG = Buffer.from('net/chat-read-auth/v1\u0000', 'ascii');
const VM_READ_TAG = Buffer.from('net/vm-read-auth/v1\u0000', 'ascii');

export interface IssuedChallenge {
  challenge: string;
  expires_at: bigint;
}

/** The query parameters of a chat read (§5.2); absent ones are empty strings. */
export interface ReadProof {
  account: string;
  challenge: string;
  sig: string;
  pub_key: string;
}

/** Where the node finds the public key of an address it has seen (§5.4). */
export interface KeyLookup {
  publicKeyOf(address: string): string | null;
}

export function chatReadDigest(challenge: Uint8Array): Buffer {
  return createHash('sha256').update(CHAT_READ_TAG).update(challenge).digest();
}

export function vmReadDigest(challenge: Uint8Array): Buffer {
  return createHash('sha256').update(VM_READ_TAG).update(challenge).digest();
}

export interface ReadAuthOptions {
  now: () => bigint;
  /** 32-byte node secret; random per process unless given (tests use the vector's). */
  secret?: Uint8Array;
  random?: (n: number) => Uint8Array;
}

const forbidden = (message: string): ChatError => new ChatError(403, message);

export class ReadAuth {
  private readonly secret: Uint8Array;
  private readonly now: () => bigint;
  private readonly random: (n: number) => Uint8Array;
  /** hex of the 16 random bytes of a consumed challenge → its expires_at. */
  private readonly used = new Map<string, bigint>();

  constructor(options: ReadAuthOptions) {
    this.now = options.now;
    this.random = options.random ?? randomBytes;
    this.secret = options.secret ?? randomBytes(32);
  }

  /** §5.1. Stores nothing. */
  issue(): IssuedChallenge {
    let nonce: Uint8Array;
    try {
      nonce = this.random(16);
      if (nonce.length !== 16) throw new Error('short read');
    } catch {
      throw new ChatError(500, 'could not issue challenge');
    }
    const expiresAt = this.now() + CHALLENGE_TTL_NS;
    const head = Buffer.alloc(24);
    head.writeBigInt64BE(expiresAt, 0);
    head.set(nonce, 8);
    const mac = createHmac('sha256', this.secret).update(head).digest();
    return { challenge: Buffer.concat([head, mac]).toString('hex'), expires_at: expiresAt };
  }

  /**
   * §5.3 for a chat read. Throws ChatError (400/401/403) with the exact message; on success the
   * challenge is consumed.
   */
  verifyChatReadProof(proof: ReadProof, keys: KeyLookup): void {
    if (!proof.account) throw new ChatError(400, 'missing account parameter');
    if (!isLowerHex(proof.account, 64)) throw new ChatError(400, 'invalid account');
    if (!proof.challenge || !proof.sig) {
      throw new ChatError(
        401,
        'chat read requires an ownership proof (challenge + sig); GET /chat/auth/challenge first',
      );
    }
    const challenge = this.checkChallenge(proof.challenge);
    const publicKey = this.accountKey(proof, keys);
    this.checkSignature(publicKey, chatReadDigest(challenge.bytes), proof.sig, 'ownership proof failed');
    this.consume(challenge);
  }

  /**
   * §5.5: a VM read proof by the lease's access key. Throws ChatError 403 when the proof does not hold
   * (the caller only withholds `credentials`); on success the challenge is consumed.
   */
  verifyVmReadProof(accessPubKey: string, challengeHex: string, sig: string): void {
    const challenge = this.checkChallenge(challengeHex);
    this.checkSignature(accessPubKey, vmReadDigest(challenge.bytes), sig, 'vm read proof failed');
    this.consume(challenge);
  }

  /** Malformed, not issued here, expired — in that order (§5.3). */
  private checkChallenge(hex: string): { bytes: Buffer; nonce: string; expiresAt: bigint } {
    this.purgeUsed();
    if (!isLowerHex(hex, 112)) throw forbidden('malformed challenge');
    const bytes = Buffer.from(hex, 'hex');
    const mac = createHmac('sha256', this.secret).update(bytes.subarray(0, 24)).digest();
    if (!timingSafeEqual(mac, bytes.subarray(24))) throw forbidden('challenge not issued by this node');
    const expiresAt = bytes.readBigInt64BE(0);
    if (this.now() > expiresAt) throw forbidden('challenge expired');
    return { bytes, nonce: bytes.subarray(8, 24).toString('hex'), expiresAt };
  }

  private accountKey(proof: ReadProof, keys: KeyLookup): string {
    if (proof.pub_key) {
      if (!isLowerHex(proof.pub_key, 64) || accountAddress(proof.pub_key) !== proof.account) {
        throw forbidden(`ownership proof key: public key does not derive account ${proof.account}`);
      }
      return proof.pub_key;
    }
    const known = keys.publicKeyOf(proof.account);
    if (!known) throw forbidden(`ownership proof key: no public key known for account ${proof.account}`);
    return known;
  }

  private checkSignature(publicKey: string, digest: Buffer, sig: string, prefix: string): void {
    if (!isLowerHex(sig, 128)) throw forbidden(`${prefix}: sig must be 128 lowercase hex characters`);
    if (!verifyEd25519(publicKey, digest, sig)) throw forbidden(`${prefix}: signature verification failed`);
  }

  private consume(challenge: { nonce: string; expiresAt: bigint }): void {
    if (this.used.has(challenge.nonce)) throw forbidden('challenge already used');
    this.used.set(challenge.nonce, challenge.expiresAt);
  }

  private purgeUsed(): void {
    const now = this.now();
    for (const [nonce, expiresAt] of this.used) if (now > expiresAt) this.used.delete(nonce);
  }
}
