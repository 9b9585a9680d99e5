// Chat intake (chat-and-directory.md §4): verify, apply quotas, then store here or relay to the
// recipient's directory node. Also the receiving side of a relay (§4.1).
import type { JsonValue } from '../../ledger/codec/json.js';
import type { Network } from '../network/network.js';
import { isValidPeerId } from '../network/peer-id.js';
import type { DirectoryService } from '../directory/service.js';
import { EnvelopeShapeError, envelopeFailure, MAX_MESSAGE_BYTES, parseEnvelope, type ChatEnvelope } from './envelope.js';
import { ChatError } from './errors.js';
import type { IntakeQuotas } from './quotas.js';
import type { ChatStore } from './store.js';
import type { KeyBindings } from './key-bindings.js';

export interface ChatServiceDeps {
  store: ChatStore;
  quotas: IntakeQuotas;
  directory: DirectoryService;
  network: Network;
  bindings: Pick<KeyBindings, 'remember'>;
  now: () => bigint;
  /** The node's chat difficulty (GET /node `chat_pow_difficulty`); 0 disables the proof of work. */
  difficulty: bigint;
}

/** A relayed envelope the receiving node refuses (§4.1); the message goes back to the sender's node. */
export class RelayRefusal extends Error {}

export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  /** `POST /chat/send` after the body was decoded (§4 steps 2–10); throws ChatError. Returns the id. */
  async send(body: JsonValue): Promise<string> {
    const { store, directory, network } = this.deps;
    let envelope: ChatEnvelope;
    try {
      envelope = parseEnvelope(body);
    } catch (err) {
      if (err instanceof EnvelopeShapeError) throw new ChatError(400, 'invalid request body');
      throw err;
    }
    if (!envelope.to) throw new ChatError(400, "missing 'to' field");
    if (!envelope.from || !envelope.pub_key || !envelope.signature) {
      throw new ChatError(400, 'chat send requires a signed envelope (from + pub_key + signature)');
    }
    if (Buffer.byteLength(envelope.message, 'utf8') > MAX_MESSAGE_BYTES) {
      throw new ChatError(400, `message exceeds maximum length of ${MAX_MESSAGE_BYTES} bytes`);
    }
    const failure = this.verify(envelope);
    if (failure) throw new ChatError(400, `invalid envelope: ${failure}`);
    this.deps.quotas.admit(envelope.from, envelope.to);

    const recipient = directory.lookup(envelope.to);
    if (!recipient || !isValidPeerId(recipient.node_peer)) throw new ChatError(404, 'recipient not found in directory');
    if (recipient.node_peer === network.peerId) {
      if (!store.add(envelope)) throw new ChatError(400, 'duplicate envelope');
      return envelope.id;
    }
    try {
      await network.sendChat(recipient.node_peer, envelope);
    } catch (err) {
      throw new ChatError(502, `send chat: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (directory.lookup(envelope.from)?.node_peer === network.peerId && !store.add(envelope)) {
      throw new ChatError(400, 'duplicate envelope');
    }
    return envelope.id;
  }

  /**
   * The receiving side of `account_chat` (§4.1): full verification at this node's own difficulty and
   * freshness window, the intake quotas, and this node must be the directory node of `to`.
   * Throws RelayRefusal (or the quota's ChatError) with the message the sender's node reports.
   */
  receiveRelayed(payload: JsonValue): void {
    let envelope: ChatEnvelope;
    try {
      envelope = parseEnvelope(payload);
    } catch (err) {
      if (err instanceof EnvelopeShapeError) throw new RelayRefusal(`invalid chat envelope: ${err.message}`);
      throw err;
    }
    const failure = this.verify(envelope);
    if (failure) throw new RelayRefusal(`envelope verification failed: ${failure}`);
    this.deps.quotas.admit(envelope.from, envelope.to);
    if (this.deps.directory.lookup(envelope.to)?.node_peer !== this.deps.network.peerId) {
      throw new RelayRefusal('recipient is not registered on this node');
    }
    if (!this.deps.store.add(envelope)) throw new RelayRefusal('duplicate envelope');
  }

  /** §4 step 5; a verified envelope proves its address → key binding (§5.4). */
  private verify(envelope: ChatEnvelope): string | null {
    const failure = envelopeFailure(envelope, { now: this.deps.now(), difficulty: this.deps.difficulty });
    if (!failure) this.deps.bindings.remember(envelope.from, envelope.pub_key);
    return failure;
  }
}
