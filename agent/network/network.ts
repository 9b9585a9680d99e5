// The `Network` port: everything the node asks of its peers. Wave 1 runs `LocalNetwork` (no peers);
// the libp2p implementation fills the same contract later (p2p.md §4–§5, provider.md §7.2).
import type { Duplex } from 'node:stream';
import type { JsonValue } from '../../ledger/codec/json.js';
import type { StatechainBlock } from '../../ledger/service.js';
import type { Attestation, Block, Certificate } from '../../ledger/types.js';
import type { ChatEnvelope } from '../chat/envelope.js';
import type { Registration } from '../directory/registration.js';
import type { MarketplaceMessage } from '../marketplace/messages.js';

export interface PeerInfo {
  /** libp2p peer id. */
  id: string;
  /** Multiaddrs (revealed only to operators, api.md §6.1). */
  addresses: string[];
}

/**
 * A request to a peer failed. `message` is the text the routes quote after their prefix, e.g.
 * `msg: open stream to <peer>: <detail>` or `msg account_chat: duplicate envelope` (chat-and-directory.md §4).
 */
export class NetworkError extends Error {
  constructor(
    message: string,
    /** unreachable: no stream; timeout: no answer in time; refused: the peer answered with an error. */
    readonly kind: 'unreachable' | 'timeout' | 'refused',
  ) {
    super(message);
    this.name = 'NetworkError';
  }
}

export interface Network {
  /** This node's libp2p peer id (`GET /node` `id`, directory `node_peer`). */
  readonly peerId: string;
  connectedPeers(): PeerInfo[];
  /** Called for every newly connected peer; returns the unsubscribe function. */
  onPeerConnected(listener: (peer: PeerInfo) => void): () => void;

  /** `account_chat` (30 s); resolves when the peer stored it, rejects with NetworkError otherwise. */
  sendChat(peer: string, envelope: ChatEnvelope): Promise<void>;
  /** `attest_timestamp` (10 s); the peer's attestation for a lease hash or certificate identifier. */
  requestAttestation(peer: string, identifier: string): Promise<Attestation>;
  /** `vm_status` (10 s); the provider's VM record without credentials. */
  vmStatus(peer: string, leaseHash: string): Promise<JsonValue>;
  /** `/net/tunnel/2.0.0`: a raw byte pipe to the VM after the provider's OK status byte. */
  openTunnel(peer: string, leaseHash: string, accessSignature: Uint8Array): Promise<Duplex>;

  /** Gossip (publish on change only, p2p.md §4). */
  publishRegistration(registration: Registration): void;
  publishCertificate(certificate: Certificate): void;
  publishMarketplace(message: MarketplaceMessage): void;
  publishBlock(block: Block): void;
  publishStatechainBlock(block: StatechainBlock): void;
}
