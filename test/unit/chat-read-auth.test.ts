import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { ChatError } from '../../agent/chat/errors.js';
import { chatReadDigest, ReadAuth, vmReadDigest, type KeyLookup, type ReadProof } from '../../agent/chat/read-auth.js';
import { KeyBindings } from '../../agent/chat/key-bindings.js';
import { devKey, TestClock, vectors, type Obj } from './net-helpers.js';

const readVector = (vectors.chat_read_proof_vectors as Obj[])[0]!;
const vmVector = (vectors.vm_read_proof_vectors as Obj[])[0]!;
const dev6 = devKey(6);
const dev9 = devKey(9);
const noKeys: KeyLookup = { publicKeyOf: () => null };

/** The vector's node: secret 0xaa…, random bytes 10…1f, clock such that expires_at matches. */
function vectorAuth(clock: TestClock): ReadAuth {
  return new ReadAuth({
    now: clock.now,
    secret: Buffer.from(readVector.node_secret_hex as string, 'hex'),
    random: () => Buffer.from(readVector.random_hex as string, 'hex'),
  });
}

function proofError(fn: () => void): { status: number; message: string } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ChatError);
    return { status: (e as ChatError).status, message: (e as ChatError).message };
  }
  throw new Error('expected a ChatError');
}

function freshProof(auth: ReadAuth, key = dev6, over: Partial<ReadProof> = {}): ReadProof {
  const { challenge } = auth.issue();
  const sig = signEd25519(key.seed, chatReadDigest(Buffer.from(challenge, 'hex')));
  return { account: key.address, challenge, sig, pub_key: key.publicKey, ...over };
}

describe('chat_read_proof_vectors', () => {
  it('issues the vector challenge and accepts the vector proof once', () => {
    const expiresAt = readVector.expires_at as bigint;
    const clock = new TestClock(expiresAt - 120_000_000_000n);
    const auth = vectorAuth(clock);
    const issued = auth.issue();
    expect(issued).toEqual({ challenge: readVector.challenge_hex, expires_at: expiresAt });
    const digest = chatReadDigest(Buffer.from(issued.challenge, 'hex'));
    expect(digest.toString('hex')).toBe(readVector.digest_hex);
    expect(Buffer.concat([Buffer.from('net/chat-read-auth/v1\0'), Buffer.from(issued.challenge, 'hex')]).toString('hex')).toBe(
      readVector.digest_preimage_hex,
    );
    expect(signEd25519(dev6.seed, digest)).toBe(readVector.sig);

    const proof = { account: readVector.account as string, challenge: issued.challenge, sig: readVector.sig as string, pub_key: '' };
    const keys: KeyLookup = { publicKeyOf: (a) => (a === readVector.account ? (readVector.public_key as string) : null) };
    auth.verifyChatReadProof(proof, keys);
    expect(proofError(() => auth.verifyChatReadProof(proof, keys))).toEqual({ status: 403, message: 'challenge already used' });
  });
});

describe('vm_read_proof_vectors', () => {
  it('verifies the VM proof under the access key, single use, distinct from the chat proof', () => {
    const clock = new TestClock((readVector.expires_at as bigint) - 1n);
    const auth = vectorAuth(clock);
    const challenge = vmVector.challenge_hex as string;
    expect(vmReadDigest(Buffer.from(challenge, 'hex')).toString('hex')).toBe(vmVector.digest_hex);
    expect(signEd25519(dev9.seed, vmReadDigest(Buffer.from(challenge, 'hex')))).toBe(vmVector.sig);
    const access = vmVector.access_pub_key as string;
    expect(access).toBe(dev9.publicKey);

    // A chat read proof by the same key over the same challenge is not a VM read proof.
    const chatSig = signEd25519(dev9.seed, chatReadDigest(Buffer.from(challenge, 'hex')));
    expect(proofError(() => auth.verifyVmReadProof(access, challenge, chatSig)).message).toBe(
      'vm read proof failed: signature verification failed',
    );
    expect(proofError(() => auth.verifyVmReadProof(access, challenge, 'xyz')).message).toBe(
      'vm read proof failed: sig must be 128 lowercase hex characters',
    );
    auth.verifyVmReadProof(access, challenge, vmVector.sig as string);
    expect(proofError(() => auth.verifyVmReadProof(access, challenge, vmVector.sig as string))).toEqual({
      status: 403,
      message: 'challenge already used',
    });
  });

  it('a challenge consumed by a VM read cannot serve a chat read', () => {
    const clock = new TestClock(1_800_000_000_000_000_000n);
    const auth = new ReadAuth({ now: clock.now });
    const { challenge } = auth.issue();
    auth.verifyVmReadProof(dev9.publicKey, challenge, signEd25519(dev9.seed, vmReadDigest(Buffer.from(challenge, 'hex'))));
    const sig = signEd25519(dev6.seed, chatReadDigest(Buffer.from(challenge, 'hex')));
    expect(proofError(() => auth.verifyChatReadProof({ account: dev6.address, challenge, sig, pub_key: dev6.publicKey }, noKeys)).message).toBe(
      'challenge already used',
    );
  });
});

describe('chat read proof verification (§5.3), every message', () => {
  const clock = new TestClock(1_800_000_000_000_000_000n);
  const auth = new ReadAuth({ now: clock.now });

  it('challenges are 56 bytes expiring 120 s after issue', () => {
    const { challenge, expires_at } = auth.issue();
    expect(challenge).toMatch(/^[0-9a-f]{112}$/);
    expect(expires_at).toBe(clock.ns + 120_000_000_000n);
    expect(BigInt('0x' + challenge.slice(0, 16))).toBe(expires_at);
  });

  it('500 could not issue challenge when randomness fails', () => {
    const broken = new ReadAuth({ now: clock.now, random: () => { throw new Error('entropy'); } });
    expect(proofError(() => broken.issue())).toEqual({ status: 500, message: 'could not issue challenge' });
  });

  it.each([
    ['missing account', { account: '' }, 400, 'missing account parameter'],
    ['uppercase account', { account: dev6.address.toUpperCase() }, 400, 'invalid account'],
    ['short account', { account: 'abc' }, 400, 'invalid account'],
    ['missing challenge', { challenge: '' }, 401, 'chat read requires an ownership proof (challenge + sig); GET /chat/auth/challenge first'],
    ['missing sig', { sig: '' }, 401, 'chat read requires an ownership proof (challenge + sig); GET /chat/auth/challenge first'],
    ['malformed challenge', { challenge: 'ab' }, 403, 'malformed challenge'],
    ['uppercase challenge', { challenge: 'AB'.repeat(56) }, 403, 'malformed challenge'],
    ['foreign challenge', { challenge: (readVector.challenge_hex as string) }, 403, 'challenge not issued by this node'],
    ['key of another account', { pub_key: devKey(7).publicKey }, 403, `ownership proof key: public key does not derive account ${dev6.address}`],
    ['malformed pub_key', { pub_key: 'zz' }, 403, `ownership proof key: public key does not derive account ${dev6.address}`],
    ['malformed sig', { sig: 'ab' }, 403, 'ownership proof failed: sig must be 128 lowercase hex characters'],
    ['wrong signature', { sig: 'ab'.repeat(64) }, 403, 'ownership proof failed: signature verification failed'],
  ] as const)('%s', (_n, over, status, message) => {
    const proof = freshProof(auth, dev6, over as Partial<ReadProof>);
    expect(proofError(() => auth.verifyChatReadProof(proof, noKeys))).toEqual({ status, message });
  });

  it('a challenge from another process (other secret) is not issued by this node', () => {
    const other = new ReadAuth({ now: clock.now });
    const proof = freshProof(other);
    expect(proofError(() => auth.verifyChatReadProof(proof, noKeys)).message).toBe('challenge not issued by this node');
  });

  it('expired: valid until expires_at inclusive, 403 one nanosecond later', () => {
    const local = new TestClock(1_800_000_000_000_000_000n);
    const a = new ReadAuth({ now: local.now });
    const p1 = freshProof(a);
    const p2 = freshProof(a);
    local.advance(120_000_000_000n);
    a.verifyChatReadProof(p1, noKeys);
    local.advance(1n);
    expect(proofError(() => a.verifyChatReadProof(p2, noKeys))).toEqual({ status: 403, message: 'challenge expired' });
  });

  it('without pub_key the bound key is used; unknown accounts cannot prove', () => {
    const proof = freshProof(auth, dev6, { pub_key: '' });
    expect(proofError(() => auth.verifyChatReadProof(proof, noKeys))).toEqual({
      status: 403,
      message: `ownership proof key: no public key known for account ${dev6.address}`,
    });
    auth.verifyChatReadProof(proof, { publicKeyOf: (a) => (a === dev6.address ? dev6.publicKey : null) });
  });

  it('a failed proof does not consume the challenge; a valid one does', () => {
    const proof = freshProof(auth);
    expect(proofError(() => auth.verifyChatReadProof({ ...proof, sig: 'cd'.repeat(64) }, noKeys)).status).toBe(403);
    auth.verifyChatReadProof(proof, noKeys);
    expect(proofError(() => auth.verifyChatReadProof(proof, noKeys)).message).toBe('challenge already used');
  });

  it('a proof signed for another account does not prove this one', () => {
    const { challenge } = auth.issue();
    const sig = signEd25519(devKey(7).seed, chatReadDigest(Buffer.from(challenge, 'hex')));
    expect(
      proofError(() => auth.verifyChatReadProof({ account: dev6.address, challenge, sig, pub_key: dev6.publicKey }, noKeys)).message,
    ).toBe('ownership proof failed: signature verification failed');
  });
});

describe('KeyBindings (§5.4)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('prefers the ledger key, remembers verified bindings only, persists them across reopen', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bindings-'));
    dirs.push(dir);
    const path = join(dir, 'bindings.db');
    const ledgerKeys = new Map([[devKey(1).address, devKey(1).publicKey]]);
    const b = new KeyBindings((a) => ledgerKeys.get(a) ?? null, path);
    expect(b.publicKeyOf(devKey(1).address)).toBe(devKey(1).publicKey);
    expect(b.publicKeyOf(dev6.address)).toBeNull();
    b.remember(dev6.address, devKey(7).publicKey); // does not derive: ignored
    expect(b.publicKeyOf(dev6.address)).toBeNull();
    b.remember(dev6.address, dev6.publicKey);
    expect(b.publicKeyOf(dev6.address)).toBe(dev6.publicKey);
    b.close();
    const reopened = new KeyBindings(() => null, path);
    expect(reopened.publicKeyOf(dev6.address)).toBe(dev6.publicKey);
    reopened.close();
  });

  it('evicts the least recently used binding when full', () => {
    const b = new KeyBindings(() => null, ':memory:', 2);
    const [k3, k4, k5] = [devKey(3), devKey(4), devKey(5)];
    b.remember(k3.address, k3.publicKey);
    b.remember(k4.address, k4.publicKey);
    expect(b.publicKeyOf(k3.address)).toBe(k3.publicKey); // k3 used more recently than k4
    b.remember(k5.address, k5.publicKey);
    expect(b.publicKeyOf(k4.address)).toBeNull();
    expect(b.publicKeyOf(k3.address)).toBe(k3.publicKey);
    expect(b.publicKeyOf(k5.address)).toBe(k5.publicKey);
    b.close();
  });
});
