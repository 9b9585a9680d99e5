// The peerless `Network` of wave 1: no peers, gossip goes nowhere, and every request fails the way a
// request to an unreachable peer does.
import type { Duplex } from 'node:stream';
import type { JsonValue } from '../../ledger/codec/json.js';
import type { StatechainBlock } from '../../ledger/service.js';
import type { Attestation, Block, Certificate } from '../../ledger/types.js';
import type { ChatEnvelope } from '../chat/envelope.js';
import type { Registration } from '../directory/registration.js';
import type { MarketplaceMessage } from '../marketplace/messages.js';
import { NetworkError, type Network, type PeerInfo } from './network.js';

const NO_PEERS = 'peer not reachable: peer-to-peer networking is not enabled on this node';

function unreachable(peer: string): NetworkError {
  return new NetworkError(`msg: open stream to ${peer}: ${NO_PEERS}`, 'unreachable');
}

export class LocalNetwork implements Network {
  constructor(readonly peerId: string) {}

  connectedPeers(): PeerInfo[] {
    return [];
  }

  onPeerConnected(_listener: (peer: PeerInfo) => void): () => void {
    return () => {};
  }

  async sendChat(peer: string, _envelope: ChatEnvelope): Promise<void> {
    throw unreachable(peer);
  }

  async requestAttestation(peer: string, _identifier: string): Promise<Attestation> {
    throw unreachable(peer);
  }

  async vmStatus(peer: string, _leaseHash: string): Promise<JsonValue> {
    throw unreachable(peer);
  }

  async openTunnel(_peer: string, _leaseHash: string, _accessSignature: Uint8Array): Promise<Duplex> {
    throw new NetworkError('provider peer not found', 'unreachable');
  }

  publishRegistration(_registration: Registration): void {}
  publishCertificate(_certificate: Certificate): void {}
  publishMarketplace(_message: MarketplaceMessage): void {}
  publishBlock(_block: Block): void {}
  publishStatechainBlock(_block: StatechainBlock): void {}
}
