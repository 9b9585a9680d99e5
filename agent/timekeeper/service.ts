// Timekeeper service (leases.md §5.4, provider.md §8): sign attestations on request for live leases
// and registered providers' certificate identifiers, and gather attestations for this node's own use.
import { isLowerHex, short } from '../../ledger/codec/hex.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { signAttestation, verifyAttestation } from '../../ledger/crypto/attestation.js';
import type { LedgerService } from '../../ledger/service.js';
import type { Attestation, Keyset } from '../../ledger/types.js';
import type { Network } from '../network/network.js';
import { currentTimekeepers } from './timekeepers.js';

/** At most this many attestations go into a block (leases.md §5.3). */
export const MAX_ATTESTATIONS = 20;
const PEER_TIMEOUT_MS = 10_000;
/** Over p2p a node signs at most once per (peer, identifier) per 30 s (leases.md §5.4). */
const PEER_SLOT_NS = 30_000_000_000n;
const OVERALL_TIMEOUT_MS = 15_000;

/** A refused attestation request (`400 <message>`, api.md §7.5). */
export class AttestationError extends Error {}

export interface TimekeeperDeps {
  ledger: Pick<LedgerService, 'lease' | 'statechain'>;
  /** Whether an identifier is a registered account or its certificate end identifier (leases.md §5.4). */
  isRegisteredIdentifier: (identifier: string) => boolean;
  network: Pick<Network, 'connectedPeers' | 'requestAttestation'>;
  nodeSeed: Uint8Array;
  now: () => bigint;
}

export interface GatherResult {
  attestations: Attestation[];
  timekeepers: Keyset | null;
}

export class TimekeeperService {
  readonly publicKey: string;
  /** `${peer} ${identifier}` → when its slot was taken. */
  private readonly peerSlots = new Map<string, bigint>();

  constructor(private readonly deps: TimekeeperDeps) {
    this.publicKey = publicKeyFromSeed(deps.nodeSeed);
  }

  /** `POST /attestation/request` / `attest_timestamp`: validate the identifier, then sign it now. */
  attest(identifier: unknown): Attestation {
    if (identifier === undefined || identifier === null || identifier === '') {
      throw new AttestationError('lease_hash required');
    }
    if (typeof identifier !== 'string') throw new AttestationError('invalid request body');
    if (identifier.length !== 64) throw new AttestationError(`invalid attestation identifier length: ${identifier.length}`);
    if (!isLowerHex(identifier)) throw new AttestationError('invalid attestation identifier');
    const now = this.deps.now();
    const lease = this.deps.ledger.lease(identifier, now);
    if (lease) {
      if (lease.state !== 'created' && lease.state !== 'accepted') {
        throw new AttestationError(
          `lease ${short(identifier)} is ${lease.state}: no attestation-gated transitions remain`,
        );
      }
    } else if (!this.deps.isRegisteredIdentifier(identifier)) {
      throw new AttestationError(
        `unknown attestation identifier ${short(identifier)}: not a live lease or a registered provider`,
      );
    }
    return signAttestation(this.deps.nodeSeed, identifier, now);
  }

  /**
   * `attest_timestamp` from a peer: as `attest`, plus one signature per (peer, identifier) per 30 s;
   * the slot is taken only after the request passed validation.
   */
  attestForPeer(peerId: string, identifier: unknown): Attestation {
    const now = this.deps.now();
    for (const [key, takenAt] of this.peerSlots) if (now - takenAt >= PEER_SLOT_NS) this.peerSlots.delete(key);
    const key = `${peerId} ${String(identifier)}`;
    if (this.peerSlots.has(key)) {
      this.attest(identifier); // validation errors come first
      throw new AttestationError('rate limit: one attestation per identifier per 30s');
    }
    const attestation = this.attest(identifier);
    this.peerSlots.set(key, now);
    return attestation;
  }

  /**
   * provider.md §8: sign locally if this node is a timekeeper, ask every connected peer in parallel
   * (10 s each, 15 s overall), keep valid attestations from distinct trusted keys, at most 20.
   * The caller compares the count with `timekeepers.threshold`.
   */
  async gatherAttestations(identifier: string): Promise<GatherResult> {
    const timekeepers = currentTimekeepers(this.deps.ledger.statechain);
    if (!timekeepers) return { attestations: [], timekeepers: null };
    const trusted = new Set(timekeepers.keys);
    const candidates: Attestation[] = [];
    if (trusted.has(this.publicKey)) candidates.push(signAttestation(this.deps.nodeSeed, identifier, this.deps.now()));

    const peers = this.deps.network.connectedPeers();
    if (peers.length > 0) {
      const answers = peers.map((peer) =>
        withTimeout(this.deps.network.requestAttestation(peer.id, identifier), PEER_TIMEOUT_MS).then(
          (a) => void candidates.push(a),
          () => undefined,
        ),
      );
      await withTimeout(Promise.all(answers), OVERALL_TIMEOUT_MS).catch(() => undefined);
    }

    const counted = new Set<string>();
    const attestations: Attestation[] = [];
    for (const a of candidates) {
      if (attestations.length === MAX_ATTESTATIONS) break;
      if (!trusted.has(a.public_key) || counted.has(a.public_key) || !verifyAttestation(a, identifier)) continue;
      counted.add(a.public_key);
      attestations.push(a);
    }
    return { attestations, timekeepers };
  }

  /** True when this node's own key alone meets the timekeeper threshold (devnet). */
  selfSufficient(): boolean {
    const timekeepers = currentTimekeepers(this.deps.ledger.statechain);
    return timekeepers !== null && timekeepers.threshold <= 1 && timekeepers.keys.includes(this.publicKey);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
