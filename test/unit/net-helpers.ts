// Shared fixtures for the chat / directory / timekeeper / certificate unit tests: the vector file,
// dev keys, a recording Network, and a ledger reduced to the reads these services make.
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import type { LedgerEvent } from '../../ledger/service.js';
import type { Attestation, Block, Certificate, Lease, LeaseState } from '../../ledger/types.js';
import type { ChatEnvelope } from '../../agent/chat/envelope.js';
import type { Registration } from '../../agent/directory/registration.js';
import type { MarketplaceMessage } from '../../agent/marketplace/messages.js';
import { NetworkError, type Network, type PeerInfo } from '../../agent/network/network.js';
import { peerIdFromEd25519PublicKey } from '../../agent/network/peer-id.js';

export type Obj = { [key: string]: JsonValue };

export const vectors = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as Obj;

export function devKey(n: number): { seed: Uint8Array; publicKey: string; address: string } {
  const seed = new Uint8Array(32).fill(n);
  const publicKey = publicKeyFromSeed(seed);
  return { seed, publicKey, address: accountAddress(publicKey) };
}

export const SELF_PEER = peerIdFromEd25519PublicKey(devKey(1).publicKey);
export const OTHER_PEER = peerIdFromEd25519PublicKey(devKey(2).publicKey);

/** A settable clock in Unix ns. */
export class TestClock {
  constructor(public ns: bigint) {}
  now = (): bigint => this.ns;
  nowMs = (): number => Number(this.ns / 1_000_000n);
  advance(ns: bigint): void {
    this.ns += ns;
  }
}

/** Records what the services ask of their peers; relays answer with `relayError` when set. */
export class RecordingNetwork implements Network {
  readonly sentChats: { peer: string; envelope: ChatEnvelope }[] = [];
  readonly registrations: Registration[] = [];
  readonly certificates: Certificate[] = [];
  readonly marketplace: MarketplaceMessage[] = [];
  relayError: NetworkError | null = null;
  peers: PeerInfo[] = [];
  attestationAnswers = new Map<string, (identifier: string) => Promise<Attestation>>();
  private readonly peerListeners = new Set<(peer: PeerInfo) => void>();

  constructor(readonly peerId: string = SELF_PEER) {}

  connectedPeers(): PeerInfo[] {
    return this.peers;
  }
  onPeerConnected(listener: (peer: PeerInfo) => void): () => void {
    this.peerListeners.add(listener);
    return () => this.peerListeners.delete(listener);
  }
  connect(peer: PeerInfo): void {
    this.peers.push(peer);
    for (const l of this.peerListeners) l(peer);
  }
  async sendChat(peer: string, envelope: ChatEnvelope): Promise<void> {
    if (this.relayError) throw this.relayError;
    this.sentChats.push({ peer, envelope });
  }
  async requestAttestation(peer: string, identifier: string): Promise<Attestation> {
    const answer = this.attestationAnswers.get(peer);
    if (!answer) throw new NetworkError(`msg: open stream to ${peer}: unreachable`, 'unreachable');
    return answer(identifier);
  }
  async vmStatus(): Promise<JsonValue> {
    throw new NetworkError('not used', 'unreachable');
  }
  async openTunnel(): Promise<Duplex> {
    throw new NetworkError('not used', 'unreachable');
  }
  publishRegistration(r: Registration): void {
    this.registrations.push(r);
  }
  publishCertificate(c: Certificate): void {
    this.certificates.push(c);
  }
  publishMarketplace(m: MarketplaceMessage): void {
    this.marketplace.push(m);
  }
  publishBlock(_b: Block): void {}
  publishStatechainBlock(): void {}
}

/**
 * The ledger reads these services make (frontier, publicKeyOf, lease, statechain.get, certificates,
 * subscribe), over plain maps. Unit tests only; the integration tests run the real ledger.
 */
export class LedgerReads {
  readonly networkId: string;
  readonly open = new Map<string, string>();
  readonly leaseStates = new Map<string, LeaseState>();
  readonly kv = new Map<string, string>();
  readonly stored = new Map<string, Certificate>();
  readonly admitted: { cert: Certificate; admitUnopened: boolean }[] = [];
  private readonly listeners = new Set<(e: LedgerEvent) => void>();

  constructor(networkId = 'devnet') {
    this.networkId = networkId;
  }

  openAccount(address: string, publicKey: string): void {
    this.open.set(address, publicKey);
    for (const l of this.listeners) l({ kind: 'block.applied', block: { account: address } as Block });
  }
  frontier = (address: string): string | null => (this.open.has(address) ? 'f'.repeat(64) : null);
  publicKeyOf = (address: string): string | null => this.open.get(address) ?? null;
  lease = (hash: string): Lease | null => {
    const state = this.leaseStates.get(hash);
    return state ? ({ lease_hash: hash, state } as Lease) : null;
  };
  subscribe = (listener: (e: LedgerEvent) => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  readonly statechain = { get: (key: string): string | null => this.kv.get(key) ?? null } as never;
  readonly certificates = {
    get: (hash: string) => this.stored.get(hash) ?? null,
    active: (provider: string, at: bigint) => {
      let best: Certificate | null = null;
      for (const c of this.stored.values()) {
        if (c.provider !== provider || c.issued_at > at || (c.expires_at !== 0n && at > c.expires_at)) continue;
        if (!best || c.issued_at > best.issued_at) best = c;
      }
      return best;
    },
    add: (cert: Certificate, opts?: { admitUnopened?: boolean }) => {
      this.admitted.push({ cert, admitUnopened: opts?.admitUnopened ?? false });
      this.stored.set(cert.hash, cert);
    },
  };
}

export function devnetTimekeepers(ledger: LedgerReads, keys: string[], threshold: number): void {
  ledger.kv.set('sys.timekeepers', JSON.stringify({ keys, threshold }));
}
