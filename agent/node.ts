// Composition root: the only place that knows every concrete class. Opens the store and the ledger,
// builds the services, starts the API, the ops listener and the ledger tick loop, and stops them
// gracefully (stop accepting, finish in-flight requests, close the store).

import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS } from '../ledger/genesis/devnet.js';
import { openLedger, type Ledger } from '../ledger/ledger.js';
import { openDatabase } from '../ledger/store/db.js';
import { buildRoutes } from './api/routes.js';
import { buildApiServer } from './api/server.js';
import { PeerlessLeaseRequester, type LeaseRequester } from './api/leases.js';
import type { VmHandlers } from './api/vms.js';
import type { Route } from './api/route.js';
import { nowNs } from './api/http.js';
import { DEVNET_WORKLOAD, FULL_WORKLOAD } from './certificate/issuer.js';
import { workerWorkload } from './certificate/worker-runner.js';
import type { Config } from './config.js';
import { hostAllowlist } from './api/host-check.js';
import { loadIdentity, type NodeIdentity } from './identity.js';
import { createLogger, type Logger } from './log.js';
import { registerNodeMetrics, startOpsListener } from './metrics.js';
import { LocalNetwork } from './network/local.js';
import type { Network } from './network/network.js';
import { createPeerServices } from './peer-services.js';
import { NodeStatus } from './status.js';
import { NODE_VERSION } from './version.js';
import { enableTunnelTakeover } from '../gateway/tunnel/takeover.js';
import { startLeaseServices, type LeaseServices } from './provider/provider-stack.js';
import { BlockIntake } from './intake/block-intake.js';
import { VerifyPool } from './intake/verify-pool.js';

const TICK_MS = 250;
/** In-flight requests get this long to finish at shutdown; then remaining connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;
const DEVNET_CERTIFICATE_ITERATIONS = 1_000_000n;
/** Signature-check worker threads at most (block intake); the event loop keeps a core of its own. */
const MAX_VERIFY_THREADS = 4;

/** Parts other rooms supply (provisioning, gateway, marketplace); absent ones use the defaults. */
export interface NodeExtensions {
  vmHandlers?: VmHandlers;
  leaseRequester?: LeaseRequester;
  /** Routes served after the documented table (benchmarks: a baseline route on the same server). */
  extraRoutes?: readonly Route[];
}

export interface RunningNode {
  readonly config: Config;
  readonly logger: Logger;
  readonly ledger: Ledger;
  readonly identity: NodeIdentity;
  /** Where the API listens (null with --no-api). */
  readonly apiAddress: AddressInfo | null;
  readonly opsAddress: AddressInfo | null;
  stop(): Promise<void>;
}

function genesisTexts(config: Config): { ledger: string; statechain: string } {
  if (config.genesisDir === null) return { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS };
  return {
    ledger: readFileSync(join(config.genesisDir, 'ledger-genesis.json'), 'utf8'),
    statechain: readFileSync(join(config.genesisDir, 'statechain-genesis.json'), 'utf8'),
  };
}

export async function startNode(config: Config, extensions: NodeExtensions = {}, logger = createLogger(config.log)): Promise<RunningNode> {
  mkdirSync(config.dataDir, { recursive: true });
  const identity = loadIdentity(config.dataDir, config.dev);
  const db = openDatabase(join(config.dataDir, 'node.db'));
  const ledger = openLedger({
    db,
    genesis: genesisTexts(config),
    powDifficulty: config.powDifficulty,
    identitySeed: identity.seed,
    stabilityWindowNs: config.stabilityWindowNs,
    ...(config.dev ? { certificateIterations: DEVNET_CERTIFICATE_ITERATIONS } : {}),
  });
  const network: Network = new LocalNetwork(identity.peerId);
  const keepsCertificate = config.dev || config.provider.enabled;
  const peer = createPeerServices({
    ledger,
    network,
    nodeSeed: identity.seed,
    now: nowNs,
    chatPowDifficulty: config.chatPowDifficulty,
    bindingsPath: join(config.dataDir, 'key-bindings.db'),
    adminToken: config.adminToken,
    logger,
    ...(keepsCertificate
      ? {
          certificate: {
            workload: config.dev ? DEVNET_WORKLOAD : FULL_WORKLOAD,
            priceMultiplierMilli: BigInt(config.provider.priceMultiplierMilli),
            runWorkload: workerWorkload,
          },
        }
      : {}),
    ...(config.provider.enabled
      ? {
          advertise: {
            vcpus: BigInt(config.provider.vcpus),
            memory_mb: BigInt(config.provider.memoryMb),
            disk_gb: BigInt(config.provider.diskGb),
            max_concurrent_leases: BigInt(config.provider.policy.maxConcurrentLeases),
          },
        }
      : {}),
  });
  const ownCertificate = () => peer.issuer?.myCertificate() ?? null;

  let api: FastifyInstance | null = null;
  const status = new NodeStatus({
    ledger,
    ownAddress: identity.address,
    nodeId: identity.peerId,
    version: NODE_VERSION,
    peerCount: () => network.connectedPeers().length,
    recentSync: () => null,
    serving: () => !config.api.enabled || (api !== null && api.server.listening),
    readyMinPeers: config.ready.minPeers,
    finalityStallNs: config.ready.finalityStallNs,
  });
  status.start();

  const registry = new Registry();
  const stopMetrics = registerNodeMetrics({
    registry,
    ledger,
    status,
    version: NODE_VERSION,
    role: config.provider.enabled ? 'provider' : 'node',
    peerCount: () => network.connectedPeers().length,
    certificateValid: () => {
      const c = ownCertificate();
      return c !== null && c.expires_at > nowNs();
    },
  });

  let leaseServices: LeaseServices;
  try {
    leaseServices = await startLeaseServices({ config, ledger, db, identity, network, peer, logger, registry });
  } catch (err) {
    stopMetrics();
    status.stop();
    ledger.close();
    db.close();
    throw err;
  }

  // Block signatures are checked on worker threads (one core is left to the event loop).
  const verifyPool = new VerifyPool(Math.max(1, Math.min(MAX_VERIFY_THREADS, availableParallelism() - 1)));
  const intake = new BlockIntake(ledger, verifyPool);

  const routes = buildRoutes({
    manifest: { version: NODE_VERSION, networkId: ledger.networkId, address: identity.address, nodeId: identity.peerId },
    node: {
      ledger,
      identity: { address: identity.address, publicKey: identity.publicKey, peerId: identity.peerId },
      version: NODE_VERSION,
      provider: config.provider.enabled,
      peers: () =>
        network.connectedPeers().map((p) => ({ id: p.id, version: '', connected_at: 0n, address: p.addresses[0] ?? '' })),
      powDifficulty: config.powDifficulty,
      chatPowDifficulty: config.chatPowDifficulty,
      ownCertificate,
      adminToken: config.adminToken,
      droppedBlocks: () => 0n,
      now: nowNs,
    },
    status,
    accounts: { ledger },
    blocks: { ledger, intake, publish: (b) => network.publishBlock(b) },
    providers: peer.routes.providers,
    certificates: peer.routes.certificates,
    leases: {
      ledger,
      requester: extensions.leaseRequester ?? new PeerlessLeaseRequester(identity.address, config.provider.enabled),
      now: nowNs,
    },
    attestation: peer.routes.attestation,
    vms: { ledger, ownAddress: identity.address, now: nowNs, handlers: extensions.vmHandlers ?? leaseServices.vmHandlers },
    statechain: { ledger, publish: (b) => network.publishStatechainBlock(b) },
    directory: peer.routes.directory,
    chat: peer.routes.chat,
    ...(extensions.extraRoutes ? { extra: extensions.extraRoutes } : {}),
  });

  const tick = setInterval(() => {
    try {
      ledger.tick();
    } catch (err) {
      logger.error({ err }, 'ledger tick failed');
    }
  }, TICK_MS);

  let ops: Server | null = null;
  try {
    if (config.api.enabled) {
      api = buildApiServer({
        routes,
        logger: logger.child({ component: 'api' }),
        adminToken: config.adminToken,
        bind: config.api.bind,
        allowedHosts: config.api.allowedHosts,
        corsOrigin: config.api.corsOrigin,
        rateLimit: config.api.rateLimit,
      });
      // The tunnel route takes its connection over from the HTTP parser (api.md §8.3).
      enableTunnelTakeover(api.server);
      await api.listen({ host: config.api.bind, port: config.api.port });
    }
    if (config.metricsAddr) {
      ops = await startOpsListener(config.metricsAddr, {
        registry,
        status,
        hostAllowed: hostAllowlist(config.metricsAddr.host, config.api.allowedHosts),
      });
    }
  } catch (err) {
    clearInterval(tick);
    await api?.close();
    await verifyPool.close();
    await leaseServices.stop();
    stopMetrics();
    status.stop();
    ledger.close();
    db.close();
    throw err;
  }
  peer.start();

  const apiAddress = api ? (api.server.address() as AddressInfo) : null;
  const opsAddress = ops ? (ops.address() as AddressInfo) : null;
  logger.info(
    {
      network_id: ledger.networkId,
      address: identity.address,
      node_id: identity.peerId,
      api: apiAddress ? `${apiAddress.address}:${apiAddress.port}` : 'off',
      ops: opsAddress ? `${opsAddress.address}:${opsAddress.port}` : 'off',
    },
    'node started',
  );

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      logger.info('node stopping');
      // Long-lived streams (SSE) would hold the close open: end them, then cut stragglers.
      peer.events.closeAll();
      if (api) {
        const server = api.server;
        // Keep-alive connections go idle as their last response is written: close them as they do.
        const reap = setInterval(() => server.closeIdleConnections(), 100);
        const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        await api.close();
        clearInterval(reap);
        clearTimeout(cut);
      }
      if (ops) {
        ops.closeAllConnections();
        await new Promise<void>((resolve) => ops!.close(() => resolve()));
      }
      clearInterval(tick);
      await verifyPool.close();
      await leaseServices.stop();
      peer.stop();
      stopMetrics();
      status.stop();
      ledger.close();
      db.close();
      logger.info('node stopped');
    })());

  return { config, logger, ledger, identity, apiAddress, opsAddress, stop };
}
