// Builds the node's peer-facing services — directory, chat, timekeeper, certificate issuer,
// advertisements — and the dependencies of their API routes, so the composition root wires them
// with one call.
import type { Logger } from 'pino';
import type { LedgerService } from '../ledger/service.js';
import type { WorkloadParams } from '../ledger/certificates/codec.js';
import type { Network } from './network/network.js';
import { KeyBindings } from './chat/key-bindings.js';
import { ChatStore } from './chat/store.js';
import { IntakeQuotas } from './chat/quotas.js';
import { ChatService } from './chat/service.js';
import { ReadAuth } from './chat/read-auth.js';
import { ChatEventHub } from './chat/events.js';
import { DirectoryStore } from './directory/store.js';
import { DirectoryService } from './directory/service.js';
import { TimekeeperService } from './timekeeper/service.js';
import { CertificateIssuer, type WorkloadRunner } from './certificate/issuer.js';
import { AdvertisementBook, Advertiser, type ProviderCapacity } from './marketplace/advertisements.js';
import type { ChatRouteDeps } from './api/chat.js';
import type { DirectoryRouteDeps } from './api/directory.js';
import type { AttestationRouteDeps } from './api/attestation.js';
import type { CertificateRouteDeps } from './api/certificates.js';
import type { ProviderRouteDeps } from './api/providers.js';

export interface PeerServicesOptions {
  ledger: LedgerService;
  network: Network;
  /** The node identity seed (`<data>/node.key`; dev1 under --dev). */
  nodeSeed: Uint8Array;
  /** Unix ns. */
  now: () => bigint;
  chatPowDifficulty: bigint;
  /** SQLite file of the learned address → key bindings, e.g. `<dataDir>/key-bindings.db`. */
  bindingsPath: string;
  /** NET_API_ADMIN_TOKEN, or null. */
  adminToken: string | null;
  logger: Logger;
  /** Present when this node keeps a performance certificate (provider mode; --dev issues dev1's). */
  certificate?: {
    workload: WorkloadParams;
    priceMultiplierMilli: bigint;
    /** Default runs inline; pass `workerWorkload` (certificate/worker-runner.ts) from the compiled daemon. */
    runWorkload?: WorkloadRunner;
  };
  /** Present in provider mode: the capacity this node advertises. */
  advertise?: ProviderCapacity;
}

export interface PeerServices {
  bindings: KeyBindings;
  directory: DirectoryService;
  chatStore: ChatStore;
  chat: ChatService;
  readAuth: ReadAuth;
  events: ChatEventHub;
  timekeeper: TimekeeperService;
  issuer: CertificateIssuer | null;
  advertisements: AdvertisementBook;
  advertiser: Advertiser | null;
  routes: {
    chat: ChatRouteDeps;
    directory: DirectoryRouteDeps;
    attestation: AttestationRouteDeps;
    certificates: CertificateRouteDeps;
    providers: ProviderRouteDeps;
  };
  /** Start timers: directory pruning and self-registration, certificate keeping, advertising. */
  start(): void;
  /** Stop timers, end event streams, close the bindings file. */
  stop(): void;
}

export function createPeerServices(opts: PeerServicesOptions): PeerServices {
  const { ledger, network, nodeSeed, now } = opts;
  const bindings = new KeyBindings((address) => ledger.publicKeyOf(address), opts.bindingsPath);
  const directory = new DirectoryService({
    store: new DirectoryStore(now),
    network,
    networkId: ledger.networkId,
    now,
    ledger,
    rememberKey: (address, key) => bindings.remember(address, key),
    nodeSeed,
  });
  const chatStore = new ChatStore(now);
  const events = new ChatEventHub();
  chatStore.onStored((envelope) => events.publish(envelope));
  const chat = new ChatService({
    store: chatStore,
    quotas: new IntakeQuotas(() => Number(now() / 1_000_000n)),
    directory,
    network,
    bindings,
    now,
    difficulty: opts.chatPowDifficulty,
  });
  const readAuth = new ReadAuth({ now });
  const timekeeper = new TimekeeperService({
    ledger,
    isRegisteredIdentifier: (id) => directory.isRegisteredIdentifier(id),
    network,
    nodeSeed,
    now,
  });
  const issuer = opts.certificate
    ? new CertificateIssuer({
        ledger,
        network,
        timekeeper,
        registerSelf: () => directory.registerSelf(),
        nodeSeed,
        now,
        workload: opts.certificate.workload,
        priceMultiplierMilli: opts.certificate.priceMultiplierMilli,
        runWorkload: opts.certificate.runWorkload,
        logger: opts.logger,
      })
    : null;
  const advertisements = new AdvertisementBook(ledger.networkId, now);
  const advertiser = opts.advertise
    ? new Advertiser({ book: advertisements, network, nodeSeed, networkId: ledger.networkId, now, capacity: opts.advertise })
    : null;

  return {
    bindings,
    directory,
    chatStore,
    chat,
    readAuth,
    events,
    timekeeper,
    issuer,
    advertisements,
    advertiser,
    routes: {
      chat: { chat, store: chatStore, readAuth, keys: bindings, events, adminToken: opts.adminToken },
      directory: { directory },
      attestation: { timekeeper },
      certificates: { ledger, ownCertificate: () => issuer?.myCertificate() ?? null, now },
      providers: { ledger, advertisements, now },
    },
    start() {
      directory.start();
      issuer?.start();
      advertiser?.start();
    },
    stop() {
      advertiser?.stop();
      issuer?.stop();
      directory.stop();
      events.closeAll();
      bindings.close();
    },
  };
}
