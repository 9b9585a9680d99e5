import { describe, expect, it } from 'vitest';
import { attestationPayload, signAttestation, verifyAttestation } from '../../ledger/crypto/attestation.js';
import { verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import type { LeaseState } from '../../ledger/types.js';
import { AttestationError, MAX_ATTESTATIONS, TimekeeperService } from '../../agent/timekeeper/service.js';
import { currentTimekeepers } from '../../agent/timekeeper/timekeepers.js';
import { DirectoryStore, endIdentifier } from '../../agent/directory/store.js';
import { signRegistration } from '../../agent/directory/registration.js';
import { devKey, devnetTimekeepers, LedgerReads, OTHER_PEER, RecordingNetwork, TestClock } from './net-helpers.js';

const T = 1_800_000_000_000_000_000n;
const dev1 = devKey(1);
const LEASE = '382ff9f3b1897d8196dd993286af43b8a90086ed6e6b667bcf446e8766e55d80';

function setup() {
  const clock = new TestClock(T);
  const ledger = new LedgerReads();
  const store = new DirectoryStore(clock.now);
  const network = new RecordingNetwork();
  const timekeeper = new TimekeeperService({
    ledger,
    isRegisteredIdentifier: (id) => store.get(id) !== null || store.hasEndIdentifier(id),
    network,
    nodeSeed: dev1.seed,
    now: clock.now,
  });
  return { clock, ledger, store, network, timekeeper };
}

function attestError(tk: TimekeeperService, id: unknown): string {
  try {
    tk.attest(id);
  } catch (e) {
    expect(e).toBeInstanceOf(AttestationError);
    return (e as Error).message;
  }
  throw new Error('expected an AttestationError');
}

describe('attest (leases.md §5.4, api.md §7.5)', () => {
  it.each(['created', 'accepted'] as LeaseState[])('signs a %s lease with the node key at the node clock', (state) => {
    const { ledger, timekeeper } = setup();
    ledger.leaseStates.set(LEASE, state);
    const a = timekeeper.attest(LEASE);
    expect(a).toEqual({ public_key: dev1.publicKey, timestamp: T, signature: a.signature });
    expect(verifyEd25519(dev1.publicKey, attestationPayload(LEASE, T), a.signature)).toBe(true);
    expect(verifyAttestation(a, LEASE)).toBe(true);
    expect(a).toEqual(signAttestation(dev1.seed, LEASE, T));
  });

  it.each(['settled', 'cancelled', 'unfulfilled', 'expired'] as LeaseState[])('refuses a %s lease', (state) => {
    const { ledger, timekeeper } = setup();
    ledger.leaseStates.set(LEASE, state);
    expect(attestError(timekeeper, LEASE)).toBe(`lease 382ff9f3b189... is ${state}: no attestation-gated transitions remain`);
  });

  it('signs a registered provider address and its certificate end identifier, nothing else', () => {
    const { store, timekeeper } = setup();
    const dev6 = devKey(6);
    const end = endIdentifier(dev6.address);
    const unknown = `unknown attestation identifier ${dev6.address.slice(0, 12)}...: not a live lease or a registered provider`;
    expect(attestError(timekeeper, dev6.address)).toBe(unknown);
    expect(attestError(timekeeper, end)).toBe(`unknown attestation identifier ${end.slice(0, 12)}...: not a live lease or a registered provider`);
    store.put(signRegistration(dev6.seed, 'devnet', OTHER_PEER, T));
    expect(verifyAttestation(timekeeper.attest(dev6.address), dev6.address)).toBe(true);
    expect(verifyAttestation(timekeeper.attest(end), end)).toBe(true);
  });

  it.each([
    ['absent', undefined, 'lease_hash required'],
    ['empty', '', 'lease_hash required'],
    ['null', null, 'lease_hash required'],
    ['a number', 5n, 'invalid request body'],
    ['3 characters', 'abc', 'invalid attestation identifier length: 3'],
    ['65 characters', 'a'.repeat(65), 'invalid attestation identifier length: 65'],
    ['uppercase', LEASE.toUpperCase(), 'invalid attestation identifier'],
    ['not hex', 'g'.repeat(64), 'invalid attestation identifier'],
  ] as const)('%s → %s', (_name, id, message) => {
    expect(attestError(setup().timekeeper, id)).toBe(message);
  });
});

describe('attestForPeer (p2p attest_timestamp)', () => {
  it('one attestation per (peer, identifier) per 30 s; the slot is taken only after validation', () => {
    const { clock, ledger, timekeeper } = setup();
    ledger.leaseStates.set(LEASE, 'accepted');
    const other = 'cd'.repeat(32);
    expect(attestError({ attest: () => timekeeper.attestForPeer('p1', other) } as never, other)).toMatch(/^unknown attestation identifier/);
    ledger.leaseStates.set(other, 'created');
    timekeeper.attestForPeer('p1', other); // the failed request took no slot
    timekeeper.attestForPeer('p1', LEASE);
    timekeeper.attestForPeer('p2', LEASE);
    expect(() => timekeeper.attestForPeer('p1', LEASE)).toThrow(new AttestationError('rate limit: one attestation per identifier per 30s'));
    clock.advance(29_999_999_999n);
    expect(() => timekeeper.attestForPeer('p1', LEASE)).toThrow(AttestationError);
    clock.advance(1n);
    expect(verifyAttestation(timekeeper.attestForPeer('p1', LEASE), LEASE)).toBe(true);
  });
});

describe('gatherAttestations (provider.md §8)', () => {
  it('no sys.timekeepers → nothing gathered', async () => {
    const { timekeeper } = setup();
    expect(await timekeeper.gatherAttestations(LEASE)).toEqual({ attestations: [], timekeepers: null });
    expect(timekeeper.selfSufficient()).toBe(false);
  });

  it('devnet: the node is the sole timekeeper and signs locally', async () => {
    const { ledger, timekeeper } = setup();
    devnetTimekeepers(ledger, [dev1.publicKey], 1);
    expect(currentTimekeepers(ledger.statechain)).toEqual({ keys: [dev1.publicKey], threshold: 1 });
    expect(timekeeper.selfSufficient()).toBe(true);
    const { attestations, timekeepers } = await timekeeper.gatherAttestations(LEASE);
    expect(timekeepers?.threshold).toBe(1);
    expect(attestations).toEqual([signAttestation(dev1.seed, LEASE, T)]);
  });

  it('asks peers; keeps valid attestations from distinct trusted keys only, at most 20', async () => {
    const { ledger, network, timekeeper } = setup();
    const k2 = devKey(2);
    const k3 = devKey(3);
    devnetTimekeepers(ledger, [dev1.publicKey, k2.publicKey, k3.publicKey], 2);
    network.peers = ['p2', 'p2dup', 'p3bad', 'p4untrusted', 'p5down'].map((id) => ({ id, addresses: [] }));
    network.attestationAnswers.set('p2', async (id) => signAttestation(k2.seed, id, T + 1n));
    network.attestationAnswers.set('p2dup', async (id) => signAttestation(k2.seed, id, T + 2n));
    network.attestationAnswers.set('p3bad', async () => ({ ...signAttestation(k3.seed, LEASE, T), signature: 'ab'.repeat(64) }));
    network.attestationAnswers.set('p4untrusted', async (id) => signAttestation(devKey(4).seed, id, T));
    const { attestations } = await timekeeper.gatherAttestations(LEASE);
    expect(attestations.map((a) => a.public_key)).toEqual([dev1.publicKey, k2.publicKey]);
    expect(timekeeper.selfSufficient()).toBe(false);
  });

  it('caps the set at 20', async () => {
    const { ledger, network, timekeeper } = setup();
    const many = Array.from({ length: 30 }, (_, i) => {
      const seed = new Uint8Array(32).fill(0x40 + i);
      return { seed, pub: signAttestation(seed, LEASE, T).public_key };
    });
    devnetTimekeepers(ledger, many.map((m) => m.pub), 1);
    network.peers = many.map((_, i) => ({ id: `p${i}`, addresses: [] }));
    many.forEach((m, i) => network.attestationAnswers.set(`p${i}`, async (id) => signAttestation(m.seed, id, T)));
    const { attestations } = await timekeeper.gatherAttestations(LEASE);
    expect(attestations).toHaveLength(MAX_ATTESTATIONS);
    expect(new Set(attestations.map((a) => a.public_key)).size).toBe(MAX_ATTESTATIONS);
  });
});
