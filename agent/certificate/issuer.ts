// Certificate issuance (provider.md §9, leases.md §9): attested start, the benchmark, attested end,
// then a signed certificate stored in the ledger's certificate store and published. Renewed when less
// than 24 h of validity remain; failures back off from 15 s, doubling up to 5 min.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  attestationMerkleRoot,
  CERTIFICATE_VALIDITY_NS,
  certificateHash,
  MAX_PRICE_MULTIPLIER_MILLI,
  MIN_PRICE_MULTIPLIER_MILLI,
  runCertificateWorkload,
  WORKLOAD_VERSION,
  type WorkloadParams,
} from '../../ledger/certificates/codec.js';
import { lowerMedian } from '../../ledger/crypto/attestation.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import type { LedgerService } from '../../ledger/service.js';
import type { Attestation, Certificate } from '../../ledger/types.js';
import type { Network } from '../network/network.js';
import { endIdentifier } from '../directory/store.js';
import type { GatherResult } from '../timekeeper/service.js';

/** Devnet workload (leases.md §9.1, §9.5). */
export const DEVNET_WORKLOAD: WorkloadParams = { iterations: 1_000_000n, tableEntries: 65_536, memoryReads: 100_000 };
/** Full workload of real networks. */
export const FULL_WORKLOAD: WorkloadParams = { iterations: 375_000_000n, tableEntries: 8_388_608, memoryReads: 1_000_000 };

const RENEW_BEFORE_NS = 86_400_000_000_000n;
const REBROADCAST_MS = 5 * 60_000;
const RENEWAL_CHECK_MS = 60_000;
const FIRST_BACKOFF_MS = 15_000;
const MAX_BACKOFF_MS = 5 * 60_000;

export class IssuanceError extends Error {}

export type WorkloadRunner = (seedHex: string, params: WorkloadParams) => Promise<{ work_proof: string }>;

/** Runs the benchmark on the calling thread (fine for the devnet sizes). */
export const inlineWorkload: WorkloadRunner = async (seedHex, params) => runCertificateWorkload(seedHex, params);

export interface CertificateIssuerDeps {
  ledger: Pick<LedgerService, 'networkId' | 'certificates'>;
  network: Pick<Network, 'connectedPeers' | 'publishCertificate'>;
  timekeeper: {
    gatherAttestations(identifier: string): Promise<GatherResult>;
    selfSufficient(): boolean;
  };
  /** Registers the provider account in the directory (provider.md §9 step 1); null when not open yet. */
  registerSelf: () => unknown;
  nodeSeed: Uint8Array;
  now: () => bigint;
  workload: WorkloadParams;
  /** `--price-multiplier` (500…10,000). */
  priceMultiplierMilli: bigint;
  runWorkload?: WorkloadRunner;
  logger?: Pick<Logger, 'info' | 'warn'>;
}

export class CertificateIssuer {
  readonly provider: string;
  private readonly publicKey: string;
  private mine: Certificate | null = null;
  private timers: NodeJS.Timeout[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private backoffMs = FIRST_BACKOFF_MS;
  private inFlight: Promise<Certificate> | null = null;
  private stopped = false;

  constructor(private readonly deps: CertificateIssuerDeps) {
    this.publicKey = publicKeyFromSeed(deps.nodeSeed);
    this.provider = accountAddress(this.publicKey);
  }

  /** This node's newest certificate (even if expired), for `GET /certificate` and `GET /node`. */
  myCertificate(): Certificate | null {
    return this.mine;
  }

  /** Issue one certificate now (provider.md §9 steps 1–7). Concurrent calls share one issuance. */
  issue(): Promise<Certificate> {
    this.inFlight ??= this.issueOnce().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async issueOnce(): Promise<Certificate> {
    const { deps } = this;
    const multiplier = deps.priceMultiplierMilli;
    if (multiplier < MIN_PRICE_MULTIPLIER_MILLI || multiplier > MAX_PRICE_MULTIPLIER_MILLI) {
      throw new IssuanceError(
        `price multiplier ${multiplier} outside ${MIN_PRICE_MULTIPLIER_MILLI}..${MAX_PRICE_MULTIPLIER_MILLI}: certificate not issued`,
      );
    }
    deps.registerSelf();
    if (deps.network.connectedPeers().length === 0 && !deps.timekeeper.selfSufficient()) {
      throw new IssuanceError('no peer connected and this node alone does not meet the timekeeper threshold');
    }
    const start = await this.attested(this.provider, 'start');
    const seed = createHash('sha256')
      .update(bigintBytes(start.median))
      .update(Buffer.from(this.publicKey, 'hex'))
      .digest('hex');
    const { work_proof } = await (deps.runWorkload ?? inlineWorkload)(seed, deps.workload);
    const end = await this.attested(endIdentifier(this.provider), 'end');
    const elapsedNs = end.median - start.median;
    if (elapsedNs <= 0n) throw new IssuanceError('attested end is not after the attested start');
    const unsigned = {
      provider: this.provider,
      provider_pub_key: this.publicKey,
      seed,
      workload_version: WORKLOAD_VERSION,
      iterations: deps.workload.iterations,
      work_proof,
      score: 1 / (Number(elapsedNs) / 1e9),
      start_attestation_root: attestationMerkleRoot(start.attestations),
      end_attestation_root: attestationMerkleRoot(end.attestations),
      start_median: start.median,
      end_median: end.median,
      issued_at: start.median,
      expires_at: start.median + CERTIFICATE_VALIDITY_NS,
      price_multiplier_milli: multiplier,
    };
    const hash = certificateHash(unsigned, deps.ledger.networkId);
    const certificate: Certificate = { ...unsigned, signature: signEd25519(deps.nodeSeed, Buffer.from(hash, 'hex')), hash };
    deps.ledger.certificates.add(certificate, { admitUnopened: true });
    this.mine = certificate;
    deps.network.publishCertificate(certificate);
    deps.logger?.info({ hash, score: certificate.score, expires_at: String(certificate.expires_at) }, 'certificate issued');
    return certificate;
  }

  private async attested(identifier: string, which: 'start' | 'end'): Promise<{ median: bigint; attestations: Attestation[] }> {
    const { attestations, timekeepers } = await this.deps.timekeeper.gatherAttestations(identifier);
    if (!timekeepers) throw new IssuanceError('timekeepers not configured');
    if (attestations.length < timekeepers.threshold) {
      throw new IssuanceError(
        `${which} attestations: only ${attestations.length} valid attestations from trusted timekeepers, need ${timekeepers.threshold}`,
      );
    }
    return { median: lowerMedian(attestations.map((a) => a.timestamp)), attestations };
  }

  /**
   * Keep a valid certificate: adopt the retained one (after a restart) or issue one now; re-issue when
   * less than 24 h remain; re-broadcast every 5 min while unexpired; retry failures with backoff.
   */
  start(): void {
    this.stopped = false;
    this.mine = this.deps.ledger.certificates.active(this.provider, this.deps.now());
    this.ensureFresh();
    const renewal = setInterval(() => this.ensureFresh(), RENEWAL_CHECK_MS);
    const rebroadcast = setInterval(() => {
      if (this.mine && this.mine.expires_at >= this.deps.now()) this.deps.network.publishCertificate(this.mine);
    }, REBROADCAST_MS);
    for (const t of [renewal, rebroadcast]) t.unref();
    this.timers.push(renewal, rebroadcast);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** Resolves once the node holds a certificate with more than 24 h left (or issuance failed once). */
  ensureFresh(): Promise<void> {
    if (this.retryTimer || this.stopped) return Promise.resolve();
    if (this.mine && this.mine.expires_at - this.deps.now() > RENEW_BEFORE_NS) return Promise.resolve();
    return this.issue().then(
      () => {
        this.backoffMs = FIRST_BACKOFF_MS;
      },
      (err: unknown) => {
        this.deps.logger?.warn({ err: err instanceof Error ? err.message : String(err), retry_ms: this.backoffMs }, 'certificate issuance failed');
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          void this.ensureFresh();
        }, this.backoffMs);
        this.retryTimer.unref();
        this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      },
    );
  }
}

function bigintBytes(x: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(x, 0);
  return b;
}
