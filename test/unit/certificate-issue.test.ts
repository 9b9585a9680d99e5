import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringifyJson } from '../../ledger/codec/json.js';
import {
  attestationMerkleRoot,
  certificateToJson,
  checkCertificateContent,
  parseCertificateJson,
} from '../../ledger/certificates/codec.js';
import { parseAttestationJson } from '../../ledger/codec/block.js';
import type { Attestation, Certificate } from '../../ledger/types.js';
import { CertificateIssuer, DEVNET_WORKLOAD, IssuanceError } from '../../agent/certificate/issuer.js';
import { TimekeeperService, type GatherResult } from '../../agent/timekeeper/service.js';
import { endIdentifier } from '../../agent/directory/store.js';
import { devKey, devnetTimekeepers, LedgerReads, RecordingNetwork, TestClock, vectors, type Obj } from './net-helpers.js';

const certVectors = vectors.certificate_vectors as Obj[];
const dev1 = devKey(1);
const DAY = 86_400_000_000_000n;

afterEach(() => vi.useRealTimers());

/** A timekeeper answering fixed attestation sets (the vector's), per identifier. */
function fixedTimekeeper(start: Attestation[], end: Attestation[], threshold = 1) {
  const calls: string[] = [];
  return {
    calls,
    selfSufficient: () => true,
    gatherAttestations: async (id: string): Promise<GatherResult> => {
      calls.push(id);
      return { attestations: id === dev1.address ? start : end, timekeepers: { keys: [dev1.publicKey], threshold } };
    },
  };
}

function issuer(over: Partial<ConstructorParameters<typeof CertificateIssuer>[0]> = {}, networkId = 'devnet') {
  const ledger = new LedgerReads(networkId);
  const network = new RecordingNetwork();
  const clock = new TestClock(1_799_996_400_000_000_000n);
  let registered = 0;
  const deps = {
    ledger,
    network,
    timekeeper: fixedTimekeeper([], []),
    registerSelf: () => ++registered,
    nodeSeed: dev1.seed,
    now: clock.now,
    workload: DEVNET_WORKLOAD,
    priceMultiplierMilli: 1000n,
    ...over,
  };
  return { issuer: new CertificateIssuer(deps), ledger, network, clock, registered: () => registered };
}

describe('certificate_vectors: issuance reproduces the vector certificate', () => {
  it.each(certVectors.map((v) => [v.network_id as string, v] as const))('network %j', async (networkId, v) => {
    const start = (v.start_attestations as Obj[]).map((a) => parseAttestationJson(a));
    const end = (v.end_attestations as Obj[]).map((a) => parseAttestationJson(a));
    const tk = fixedTimekeeper(start, end);
    const { issuer: iss, ledger, network, registered } = issuer({ timekeeper: tk }, networkId);
    const cert = await iss.issue();
    expect(stringifyJson(certificateToJson(cert))).toBe(stringifyJson(v.certificate));
    expect(cert.work_proof).toBe((v.benchmark as Obj).work_proof);
    expect(tk.calls).toEqual([dev1.address, endIdentifier(dev1.address)]);
    expect(registered()).toBe(1);
    expect(ledger.admitted).toEqual([{ cert, admitUnopened: true }]);
    expect(network.certificates).toEqual([cert]);
    expect(iss.myCertificate()).toBe(cert);
  }, 30_000);
});

describe('issuance with the real timekeeper service (devnet: the node is the sole timekeeper)', () => {
  it('issues a certificate that passes the content check', async () => {
    const ledger = new LedgerReads('devnet');
    devnetTimekeepers(ledger, [dev1.publicKey], 1);
    const network = new RecordingNetwork();
    const now = () => BigInt(Date.now()) * 1_000_000n;
    const timekeeper = new TimekeeperService({ ledger, isRegisteredIdentifier: () => true, network, nodeSeed: dev1.seed, now });
    const iss = new CertificateIssuer({
      ledger, network, timekeeper, registerSelf: () => null, nodeSeed: dev1.seed, now, workload: DEVNET_WORKLOAD, priceMultiplierMilli: 1500n,
    });
    const before = now();
    const cert = await iss.issue();
    checkCertificateContent(cert, 'devnet', DEVNET_WORKLOAD.iterations);
    expect(cert.provider).toBe(dev1.address);
    expect(cert.start_median).toBeGreaterThanOrEqual(before);
    expect(cert.end_median).toBeGreaterThan(cert.start_median);
    expect(cert.issued_at).toBe(cert.start_median);
    expect(cert.expires_at).toBe(cert.start_median + 7n * DAY);
    expect(cert.score).toBe(1 / (Number(cert.end_median - cert.start_median) / 1e9));
    expect(cert.price_multiplier_milli).toBe(1500n);
    // JSON round trip keeps the exact score double
    expect(parseCertificateJson(certificateToJson(cert) as never)).toEqual(cert);
    expect(cert.start_attestation_root).not.toBe(attestationMerkleRoot([]));
  }, 30_000);
});

describe('refusals', () => {
  async function issueError(iss: CertificateIssuer): Promise<string> {
    try {
      await iss.issue();
    } catch (e) {
      expect(e).toBeInstanceOf(IssuanceError);
      return (e as Error).message;
    }
    throw new Error('expected an IssuanceError');
  }

  it.each([499n, 10_001n])('price multiplier %s is outside 500…10,000', async (m) => {
    expect(await issueError(issuer({ priceMultiplierMilli: m }).issuer)).toBe(
      `price multiplier ${m} outside 500..10000: certificate not issued`,
    );
  });

  it('waits for a peer unless the own key meets the threshold', async () => {
    const tk = { ...fixedTimekeeper([], []), selfSufficient: () => false };
    expect(await issueError(issuer({ timekeeper: tk }).issuer)).toBe(
      'no peer connected and this node alone does not meet the timekeeper threshold',
    );
  });

  it('too few attestations', async () => {
    const tk = fixedTimekeeper([], [], 1);
    expect(await issueError(issuer({ timekeeper: tk }).issuer)).toBe(
      'start attestations: only 0 valid attestations from trusted timekeepers, need 1',
    );
  });

  it('timekeepers not configured', async () => {
    const tk = { selfSufficient: () => true, gatherAttestations: async () => ({ attestations: [], timekeepers: null }) };
    expect(await issueError(issuer({ timekeeper: tk }).issuer)).toBe('timekeepers not configured');
  });
});

describe('keeping a certificate (start, renewal, retry)', () => {
  const tiny = { iterations: 1_000_000n, tableEntries: 16, memoryReads: 16 };
  const runWorkload = async () => ({ work_proof: 'ab'.repeat(32) });

  function liveTimekeeper(clock: TestClock) {
    return {
      selfSufficient: () => true,
      gatherAttestations: async (id: string): Promise<GatherResult> => {
        clock.advance(1_000_000_000n); // the benchmark "takes" a second
        const { signAttestation } = await import('../../ledger/crypto/attestation.js');
        return { attestations: [signAttestation(dev1.seed, id, clock.ns)], timekeepers: { keys: [dev1.publicKey], threshold: 1 } };
      },
    };
  }

  it('adopts a retained certificate with more than 24 h left; re-issues under 24 h', async () => {
    const clock = new TestClock(1_800_000_000_000_000_000n);
    const setup = issuer({ workload: tiny, runWorkload, now: clock.now, timekeeper: liveTimekeeper(clock) });
    const first = await setup.issuer.issue();
    const restarted = new CertificateIssuer({
      ledger: setup.ledger, network: setup.network, timekeeper: liveTimekeeper(clock), registerSelf: () => null,
      nodeSeed: dev1.seed, now: clock.now, workload: tiny, priceMultiplierMilli: 1000n, runWorkload,
    });
    restarted.start();
    await restarted.ensureFresh();
    expect(restarted.myCertificate()).toEqual(first);
    expect(setup.ledger.admitted).toHaveLength(1);

    clock.ns = first.expires_at - DAY + 1n;
    await restarted.ensureFresh();
    const second = restarted.myCertificate() as Certificate;
    expect(second.hash).not.toBe(first.hash);
    expect(second.issued_at).toBeGreaterThan(first.issued_at);
    expect(setup.ledger.admitted).toHaveLength(2);
    expect(setup.ledger.certificates.get(first.hash)).toEqual(first); // old one stays retrievable
    restarted.stop();
  });

  it('retries a failed issuance after 15 s', async () => {
    vi.useFakeTimers();
    const clock = new TestClock(1_800_000_000_000_000_000n);
    let configured = false;
    const live = liveTimekeeper(clock);
    const tk = {
      selfSufficient: () => true,
      gatherAttestations: (id: string) => (configured ? live.gatherAttestations(id) : Promise.resolve({ attestations: [], timekeepers: null })),
    };
    const { issuer: iss } = issuer({ workload: tiny, runWorkload, now: clock.now, timekeeper: tk });
    iss.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(iss.myCertificate()).toBeNull();
    configured = true;
    await vi.advanceTimersByTimeAsync(14_999);
    expect(iss.myCertificate()).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(iss.myCertificate()).not.toBeNull();
    iss.stop();
  });
});
