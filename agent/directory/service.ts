// The account directory (chat-and-directory.md §8): verified registrations from the API, from gossip
// and from the node itself; publishes only registrations that changed the store.
import type { JsonValue } from '../../ledger/codec/json.js';
import type { LedgerService } from '../../ledger/service.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import type { Network } from '../network/network.js';
import {
  parseRegistration,
  registrationFailure,
  RegistrationShapeError,
  signRegistration,
  type Registration,
} from './registration.js';
import { DirectoryStore } from './store.js';

const PRUNE_INTERVAL_MS = 60_000;
/** The node refreshes its own registration every TTL/2. */
const SELF_REFRESH_MS = 15 * 60_000;

/** A registration refused by §8.2 (`400 <message>`); `invalid request body` for a malformed body. */
export class RegistrationError extends Error {}

export interface DirectoryServiceDeps {
  store: DirectoryStore;
  network: Network;
  networkId: string;
  now: () => bigint;
  /** `frontier` says whether an account is open; `subscribe` tells when the own account opens. */
  ledger: Pick<LedgerService, 'frontier' | 'subscribe'>;
  /** Receives the key binding every verified registration proves (chat-and-directory.md §5.4). */
  rememberKey: (address: string, publicKey: string) => void;
  /** The node's identity seed: it registers its own account (§8.3). */
  nodeSeed: Uint8Array;
}

export class DirectoryService {
  private pruneTimer: NodeJS.Timeout | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private readonly unsubscribers: (() => void)[] = [];
  /** The node's own account address. */
  readonly ownAccount: string;

  constructor(private readonly deps: DirectoryServiceDeps) {
    this.ownAccount = accountAddress(publicKeyFromSeed(deps.nodeSeed));
  }

  private isOpen = (account: string): boolean => this.deps.ledger.frontier(account) !== null;

  /**
   * Verify and store a registration (`POST /directory/register` or gossip). Throws RegistrationError.
   * Returns whether the store changed; only then is it published (and only for API submissions —
   * gossip is forwarded by the mesh itself).
   */
  register(body: JsonValue, source: 'api' | 'gossip'): boolean {
    let registration: Registration;
    try {
      registration = parseRegistration(body);
    } catch (err) {
      if (err instanceof RegistrationShapeError) throw new RegistrationError('invalid request body');
      throw err;
    }
    const failure = registrationFailure(registration, {
      networkId: this.deps.networkId,
      now: this.deps.now(),
      isOpen: this.isOpen,
    });
    if (failure) throw new RegistrationError(failure);
    this.deps.rememberKey(registration.account, registration.pub_key);
    const changed = this.deps.store.put(registration);
    if (changed && source === 'api') this.deps.network.publishRegistration(registration);
    return changed;
  }

  /** The visible registration of an account, or null (absent or expired). */
  lookup(account: string): Registration | null {
    return this.deps.store.get(account);
  }

  list(after: string | undefined, limit: number): { records: Registration[]; nextAfter?: string } {
    return this.deps.store.list(after, limit);
  }

  /** Whether `identifier` is a registered account's address or its certificate end identifier. */
  isRegisteredIdentifier(identifier: string): boolean {
    return this.deps.store.get(identifier) !== null || this.deps.store.hasEndIdentifier(identifier);
  }

  /**
   * Register the node's own account now, if it is open on the ledger; publishes it (the node
   * originates it). Returns the registration, or null when the account is not open yet.
   */
  registerSelf(): Registration | null {
    const { nodeSeed, networkId, network, now } = this.deps;
    if (!this.isOpen(this.ownAccount)) return null;
    const registration = signRegistration(nodeSeed, networkId, network.peerId, now());
    this.deps.rememberKey(registration.account, registration.pub_key);
    this.deps.store.put(registration);
    network.publishRegistration(registration);
    return registration;
  }

  /**
   * Prune every 60 s; register the own account at start (or as soon as a block opens it), after the
   * first peer connects, and every 15 minutes.
   */
  start(): void {
    this.pruneTimer = setInterval(() => this.deps.store.prune(), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
    this.refreshTimer = setInterval(() => this.registerSelf(), SELF_REFRESH_MS);
    this.refreshTimer.unref();
    let registered = this.registerSelf() !== null;
    if (!registered) {
      const stop = this.deps.ledger.subscribe((event) => {
        if (registered || event.kind !== 'block.applied' || event.block.account !== this.ownAccount) return;
        registered = this.registerSelf() !== null;
        if (registered) stop();
      });
      this.unsubscribers.push(stop);
    }
    let firstPeer = true;
    this.unsubscribers.push(
      this.deps.network.onPeerConnected(() => {
        if (!firstPeer) return;
        firstPeer = false;
        this.registerSelf();
      }),
    );
  }

  stop(): void {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.pruneTimer = this.refreshTimer = null;
    for (const stop of this.unsubscribers.splice(0)) stop();
  }
}
