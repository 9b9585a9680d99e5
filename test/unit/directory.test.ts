import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../../ledger/codec/hex.js';
import { verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import {
  parseRegistration,
  registrationDigest,
  registrationFailure,
  registrationPayload,
  RegistrationShapeError,
  signRegistration,
  type Registration,
} from '../../agent/directory/registration.js';
import { DirectoryStore, endIdentifier } from '../../agent/directory/store.js';
import { DirectoryService, RegistrationError } from '../../agent/directory/service.js';
import { KeyBindings } from '../../agent/chat/key-bindings.js';
import { isValidPeerId, peerIdFromEd25519PublicKey } from '../../agent/network/peer-id.js';
import { devKey, LedgerReads, OTHER_PEER, RecordingNetwork, SELF_PEER, TestClock, vectors, type Obj } from './net-helpers.js';

const dirVectors = vectors.directory_vectors as Obj[];
const T = 1_800_000_030_000_000_000n;
const dev1 = devKey(1);
const dev6 = devKey(6);
const TTL = 1_800_000_000_000n;

describe('directory_vectors', () => {
  it.each(dirVectors.map((v) => [v.network_id as string, v] as const))('network %j: payload, digest, signature', (networkId, v) => {
    const reg = parseRegistration(v.registration!);
    expect(bytesToHex(registrationPayload(networkId, reg))).toBe(v.payload_hex);
    expect(registrationDigest(networkId, reg).toString('hex')).toBe(v.digest_hex);
    expect(verifyEd25519(reg.pub_key, registrationDigest(networkId, reg), reg.signature)).toBe(true);
    expect(signRegistration(dev1.seed, networkId, reg.node_peer, reg.timestamp)).toEqual(reg);
    const ctx = { networkId, now: reg.timestamp, isOpen: () => true };
    expect(registrationFailure(reg, ctx)).toBeNull();
    // signed for the other network: not valid here
    const otherNetwork = networkId === 'devnet' ? '' : 'devnet';
    expect(registrationFailure(reg, { ...ctx, networkId: otherNetwork })).toBe('signature verification failed');
  });
});

describe('peer ids', () => {
  it('the vector node_peer is the peer id of dev1’s ed25519 key', () => {
    const reg = dirVectors[0]!.registration as Obj;
    expect(peerIdFromEd25519PublicKey(dev1.publicKey)).toBe(reg.node_peer);
    expect(isValidPeerId(reg.node_peer as string)).toBe(true);
  });

  it.each([
    ['sha2-256 form', 'QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N', true],
    ['truncated', '12D3KooWK99VoVxNE7XzyBwXEzW7xhK7Gpv85r9F3V3fyKSUKPH', false],
    ['not base58', '12D3KooW0OIl', false],
    ['empty', '', false],
    ['arbitrary text', 'node-1', false],
  ] as const)('%s → %s', (_n, id, valid) => {
    expect(isValidPeerId(id)).toBe(valid);
  });
});

describe('registration verification (§8.2), every message in order', () => {
  const good = signRegistration(dev6.seed, 'devnet', OTHER_PEER, T);
  const ctx = { networkId: 'devnet', now: T, isOpen: (a: string) => a === dev6.address };
  const fail = (over: Partial<Registration>, c = ctx): string | null => registrationFailure({ ...good, ...over }, c);

  it('accepts a good one', () => expect(fail({})).toBeNull());
  it.each([
    [{ account: '' }, 'missing account'],
    [{ pub_key: '' }, 'missing pub_key'],
    [{ node_peer: '' }, 'missing node_peer'],
    [{ timestamp: 0n }, 'missing timestamp'],
    [{ signature: '' }, 'missing signature'],
    [{ account: dev6.address.toUpperCase() }, 'malformed registration: account must be 64 lowercase hex characters'],
    [{ pub_key: 'abc' }, 'malformed registration: pub_key must be 64 lowercase hex characters'],
    [{ signature: 'ab' }, 'malformed registration: signature must be 128 lowercase hex characters'],
    [{ node_peer: 'x'.repeat(129) }, 'malformed registration: node_peer too long'],
    [{ pub_key: devKey(7).publicKey }, `registration key: public key does not derive account ${dev6.address}`],
    [{ node_peer: SELF_PEER }, 'signature verification failed'],
  ] as [Partial<Registration>, string][])('%o → %s', (over, message) => {
    expect(fail(over)).toBe(message);
  });

  it('registration timestamp is in the future: more than 5 minutes ahead', () => {
    const ahead = (ns: bigint) => signRegistration(dev6.seed, 'devnet', OTHER_PEER, T + ns);
    expect(registrationFailure(ahead(300_000_000_000n), ctx)).toBeNull();
    expect(registrationFailure(ahead(300_000_000_001n), ctx)).toBe('registration timestamp is in the future');
  });

  it('registration account is not open on the ledger', () => {
    expect(fail({}, { ...ctx, isOpen: () => false })).toBe('registration account is not open on the ledger');
  });

  it('node_peer is not validated as a peer id; 128 characters are fine', () => {
    const r = signRegistration(dev6.seed, 'devnet', 'p'.repeat(128), T);
    expect(registrationFailure(r, ctx)).toBeNull();
  });

  it('decode: wrong JSON types are shape errors; absent fields read as zero', () => {
    expect(() => parseRegistration([])).toThrow(RegistrationShapeError);
    expect(() => parseRegistration({ timestamp: '1' })).toThrow(RegistrationShapeError);
    expect(() => parseRegistration({ account: 5n })).toThrow(RegistrationShapeError);
    expect(parseRegistration({})).toEqual({ account: '', pub_key: '', node_peer: '', timestamp: 0n, signature: '' });
  });
});

describe('DirectoryStore', () => {
  const reg = (n: number, ts: bigint, peer = OTHER_PEER): Registration => signRegistration(devKey(n).seed, 'devnet', peer, ts);

  it('newer timestamp wins; equal or older is ignored', () => {
    const store = new DirectoryStore(new TestClock(T).now);
    expect(store.put(reg(6, T))).toBe(true);
    expect(store.put(reg(6, T, SELF_PEER))).toBe(false);
    expect(store.put(reg(6, T - 1n, SELF_PEER))).toBe(false);
    expect(store.get(dev6.address)?.node_peer).toBe(OTHER_PEER);
    expect(store.put(reg(6, T + 1n, SELF_PEER))).toBe(true);
    expect(store.get(dev6.address)?.node_peer).toBe(SELF_PEER);
  });

  it('visible while now − timestamp ≤ 30 min; pruned after', () => {
    const clock = new TestClock(T);
    const store = new DirectoryStore(clock.now);
    store.put(reg(6, T));
    clock.advance(TTL);
    expect(store.get(dev6.address)).not.toBeNull();
    clock.advance(1n);
    expect(store.get(dev6.address)).toBeNull();
    expect(store.list(undefined, 10).records).toEqual([]);
    expect(store.size).toBe(1);
    store.prune();
    expect(store.size).toBe(0);
  });

  it('evicts the least recently used when full (a read counts as a use)', () => {
    const store = new DirectoryStore(new TestClock(T).now, 2);
    store.put(reg(3, T));
    store.put(reg(4, T));
    store.get(devKey(3).address);
    store.put(reg(5, T));
    expect(store.get(devKey(4).address)).toBeNull();
    expect(store.get(devKey(3).address)).not.toBeNull();
    expect(store.get(devKey(5).address)).not.toBeNull();
  });

  it('lists ascending by account with a key cursor', () => {
    const store = new DirectoryStore(new TestClock(T).now);
    for (let n = 1; n <= 9; n++) store.put(reg(n, T));
    const all = Array.from({ length: 9 }, (_, i) => devKey(i + 1).address).sort();
    const page1 = store.list(undefined, 4);
    expect(page1.records.map((r) => r.account)).toEqual(all.slice(0, 4));
    expect(page1.nextAfter).toBe(all[3]);
    const page2 = store.list(page1.nextAfter, 4);
    expect(page2.records.map((r) => r.account)).toEqual(all.slice(4, 8));
    const page3 = store.list(page2.nextAfter, 4);
    expect(page3.records.map((r) => r.account)).toEqual(all.slice(8));
    expect(page3.nextAfter).toBeUndefined();
    // an `after` that is not a stored key
    expect(store.list('0'.repeat(64), 100).records).toHaveLength(9);
    expect(store.list('f'.repeat(64), 100).records).toEqual([]);
    // exactly `limit` left: no cursor
    expect(store.list(all[4], 4).nextAfter).toBeUndefined();
  });

  it('knows certificate end identifiers of registered accounts', () => {
    const store = new DirectoryStore(new TestClock(T).now);
    store.put(reg(6, T));
    const end = endIdentifier(dev6.address);
    expect(end.slice(32, 48)).toBe('0'.repeat(16));
    expect(end.slice(0, 32) + end.slice(48)).toBe(dev6.address.slice(0, 32) + dev6.address.slice(48));
    expect(store.hasEndIdentifier(end)).toBe(true);
    expect(store.hasEndIdentifier(endIdentifier(devKey(7).address))).toBe(false);
  });
});

describe('DirectoryService', () => {
  function service() {
    const clock = new TestClock(T);
    const ledger = new LedgerReads();
    const network = new RecordingNetwork(SELF_PEER);
    const bindings = new KeyBindings(ledger.publicKeyOf, ':memory:');
    const directory = new DirectoryService({
      store: new DirectoryStore(clock.now),
      network,
      networkId: 'devnet',
      now: clock.now,
      ledger,
      rememberKey: (a, k) => bindings.remember(a, k),
      nodeSeed: dev1.seed,
    });
    return { clock, ledger, network, bindings, directory };
  }

  it('API registrations: verified, stored, published only when they changed the store', () => {
    const { ledger, network, bindings, directory } = service();
    const r = signRegistration(dev6.seed, 'devnet', OTHER_PEER, T);
    expect(() => directory.register(r as never, 'api')).toThrow(new RegistrationError('registration account is not open on the ledger'));
    ledger.open.set(dev6.address, dev6.publicKey);
    expect(directory.register(r as never, 'api')).toBe(true);
    expect(directory.register(r as never, 'api')).toBe(false);
    expect(network.registrations).toEqual([r]);
    expect(directory.lookup(dev6.address)).toEqual(r);
    ledger.open.delete(dev6.address);
    // the binding outlives the ledger view and the directory record
    expect(bindings.publicKeyOf(dev6.address)).toBe(dev6.publicKey);
    expect(() => directory.register('x' as never, 'api')).toThrow(new RegistrationError('invalid request body'));
  });

  it('gossip registrations are stored but not re-published', () => {
    const { ledger, network, directory } = service();
    ledger.open.set(dev6.address, dev6.publicKey);
    expect(directory.register(signRegistration(dev6.seed, 'devnet', OTHER_PEER, T) as never, 'gossip')).toBe(true);
    expect(network.registrations).toEqual([]);
  });

  it('registers its own account at start once open, on the first peer, and identifiers resolve', () => {
    const { ledger, network, directory } = service();
    directory.start();
    expect(network.registrations).toEqual([]); // own account not open yet
    ledger.openAccount(dev1.address, dev1.publicKey);
    expect(network.registrations.map((r) => [r.account, r.node_peer])).toEqual([[dev1.address, SELF_PEER]]);
    expect(directory.lookup(dev1.address)?.node_peer).toBe(SELF_PEER);
    network.connect({ id: OTHER_PEER, addresses: [] });
    network.connect({ id: 'third', addresses: [] });
    expect(network.registrations).toHaveLength(2);
    expect(directory.isRegisteredIdentifier(dev1.address)).toBe(true);
    expect(directory.isRegisteredIdentifier(endIdentifier(dev1.address))).toBe(true);
    expect(directory.isRegisteredIdentifier(dev6.address)).toBe(false);
    directory.stop();
  });
});
