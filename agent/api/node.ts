// Node, network and consensus reads (api.md §6): node info, activations, readiness by version,
// frontiers, supply, pending sends, conflicts and delegation.

import type { FastifyRequest } from 'fastify';
import { isHash } from '../../ledger/codec/hex.js';
import { isJsonObject, parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { formatDifficulty } from '../../ledger/crypto/pow.js';
import type { LedgerService, SupplyReport } from '../../ledger/service.js';
import type { Certificate, PendingEntry } from '../../ledger/types.js';
import { hasAdmin } from './auth.js';
import {
  afterParam,
  hexPathParam,
  jsonArrayChunks,
  pageLimit,
  pageOffset,
  pagingRequested,
  sendJson,
  sendJsonStream,
  sendKeyPage,
} from './http.js';
import type { Route } from './route.js';

/** Handshake protocol version (p2p.md §3). */
export const PROTOCOL_VERSION = '1.0.0';
/** Features this build implements (statechain.md §8). */
export const KNOWN_FEATURES: readonly string[] = ['noop'];

export interface NodeIdentityInfo {
  address: string;
  publicKey: string;
  /** libp2p peer id (`GET /node` `id`). */
  peerId: string;
}

export interface PeerView {
  id: string;
  /** peer agent version, "" when unknown */
  version: string;
  connected_at: bigint;
  /** "ip:port" or "" */
  address: string;
}

export interface NodeRouteDeps {
  ledger: LedgerService;
  identity: NodeIdentityInfo;
  /** `net/<build version>` */
  version: string;
  provider: boolean;
  peers: () => PeerView[];
  /** This node's own difficulty setting (`--pow-difficulty`). */
  powDifficulty: bigint;
  chatPowDifficulty: bigint;
  /** This node's own performance certificate, if it holds one. */
  ownCertificate: () => Certificate | null;
  adminToken: string | null;
  droppedBlocks: () => bigint;
  now: () => bigint;
}

/** Parsed JSON of a state chain value, or null when absent or unparseable. */
export function statechainValue(ledger: LedgerService, key: string): JsonValue | null {
  const text = ledger.statechain.get(key);
  if (text === null) return null;
  try {
    return parseJson(text);
  } catch {
    return null;
  }
}

/** The larger of the node's own setting and the network minimum (ledger.md §10). */
export function effectivePowDifficulty(ledger: LedgerService, own: bigint): bigint {
  const t = statechainValue(ledger, 'sys.tokenomics');
  const min = isJsonObject(t) && typeof t.min_pow_difficulty === 'bigint' ? t.min_pow_difficulty : 0n;
  return min > own ? min : own;
}

interface Activation {
  name: string;
  at_index: bigint;
  not_before_ns: bigint;
  active: boolean;
  known_to_binary: boolean;
}

/** Feature activations at the state chain tip (statechain.md §8, api.md §6.8). */
export function activations(ledger: LedgerService): Activation[] {
  const tip = ledger.statechain.tip();
  const value = statechainValue(ledger, 'sys.activations');
  const features = isJsonObject(value) && isJsonObject(value.features) ? value.features : {};
  const out: Activation[] = [];
  for (const [name, trigger] of Object.entries(features)) {
    if (!isJsonObject(trigger)) continue;
    const at = typeof trigger.at_index === 'bigint' ? trigger.at_index : 0n;
    const nb = typeof trigger.not_before_ns === 'bigint' ? trigger.not_before_ns : 0n;
    out.push({
      name,
      at_index: at,
      not_before_ns: nb,
      active: tip.index >= at && tip.timestamp >= nb,
      known_to_binary: KNOWN_FEATURES.includes(name),
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function comparePending(a: PendingEntry, b: PendingEntry): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1;
  return a.send_hash < b.send_hash ? -1 : a.send_hash > b.send_hash ? 1 : 0;
}

/** Supply report cached about 2 s (api.md §6.6). */
class SupplyCache {
  private cached: (SupplyReport & Record<string, unknown>) | null = null;
  private at = -Infinity;

  constructor(
    private readonly ledger: LedgerService,
    private readonly now: () => bigint,
  ) {}

  get(): SupplyReport & Record<string, unknown> {
    const nowMs = Date.now();
    if (this.cached && nowMs - this.at < 2000) return this.cached;
    const started = performance.now();
    // The store is read synchronously inside one call, so a single walk is a stable snapshot.
    const report = this.ledger.supply();
    this.cached = {
      ...report,
      stable: true,
      attempts: 1,
      computed_at: this.now(),
      duration_ms: BigInt(Math.round(performance.now() - started)),
    };
    this.at = nowMs;
    return this.cached;
  }
}

export function nodeRoutes(deps: NodeRouteDeps) {
  const { ledger } = deps;
  const supplyCache = new SupplyCache(ledger, deps.now);

  const info: Route = {
    method: 'GET',
    path: '/node',
    description: 'Node identity, version, network, peers, difficulties, lease timing',
    handler: (request, reply) => {
      const admin = hasAdmin(request, deps.adminToken);
      const stats = ledger.stats();
      const peers = deps.peers().map((p) =>
        admin ? { id: p.id, version: p.version, connected_at: p.connected_at, address: p.address } : { id: p.id, version: p.version, connected_at: p.connected_at },
      );
      const cert = deps.ownCertificate();
      const certValid = cert !== null && cert.expires_at > deps.now();
      return sendJson(reply, 200, {
        id: deps.identity.peerId,
        address: deps.identity.address,
        public_key: deps.identity.publicKey,
        version: deps.version,
        network_id: ledger.networkId,
        provider: deps.provider,
        peers,
        peer_count: peers.length,
        accounts: stats.accounts,
        block_count: stats.block_count,
        dropped_blocks: deps.droppedBlocks(),
        delegation_underflows: stats.delegation_underflows,
        total_delegated_weight: stats.total_delegated_weight,
        representatives: stats.representatives,
        finality_advances: stats.finality_advances,
        last_finality_ns: stats.last_finality_ns,
        pow_difficulty: formatDifficulty(effectivePowDifficulty(ledger, deps.powDifficulty)),
        chat_pow_difficulty: formatDifficulty(deps.chatPowDifficulty),
        lease_timing: { ...ledger.leaseTiming },
        certificate: certValid
          ? { valid: true, hash: cert.hash, expires_at: cert.expires_at }
          : { valid: false, hash: '', expires_at: 0n },
      });
    },
  };

  const networkActivations: Route = {
    method: 'GET',
    path: '/network/activations',
    description: 'Feature activations at the state chain tip and what this build implements',
    handler: (_request, reply) => {
      const tip = ledger.statechain.tip();
      const features = activations(ledger);
      const mpv = statechainValue(ledger, 'sys.min_protocol_version');
      return sendJson(reply, 200, {
        tip_index: tip.index,
        tip_timestamp: tip.timestamp,
        features,
        known_features: [...KNOWN_FEATURES],
        gated_block_types: {},
        unsupported_active: features.filter((f) => f.active && !f.known_to_binary).map((f) => f.name),
        unsupported_pending: features.filter((f) => !f.active && !f.known_to_binary).map((f) => f.name),
        min_protocol_version: typeof mpv === 'string' ? mpv : '',
        protocol_version: PROTOCOL_VERSION,
      });
    },
  };

  const networkReadiness: Route = {
    method: 'GET',
    path: '/network/readiness',
    description: 'Delegated weight by advertised version and feature',
    handler: (_request, reply) => {
      // Without peers, only this node's own account resolves to a version (its own).
      const d = ledger.delegation();
      const own = d.weights[deps.identity.address] ?? 0n;
      const total = d.total_weight;
      const featureWeight: Record<string, bigint> = {};
      const featureReady: Record<string, bigint> = {};
      for (const f of KNOWN_FEATURES) {
        featureWeight[f] = own;
        featureReady[f] = total === 0n ? 0n : (own * 1000n) / total;
      }
      return sendJson(reply, 200, {
        total_weight: total,
        feature_weight: featureWeight,
        feature_ready_milli: featureReady,
        version_weight: own > 0n ? [{ version: PROTOCOL_VERSION, weight: own }] : [],
        unknown_weight: total - own,
        resolved_reps: own > 0n ? 1 : 0,
        total_reps: Object.keys(d.weights).length,
      });
    },
  };

  const frontiers: Route = {
    method: 'GET',
    path: '/frontiers',
    description: 'Latest block hash of every account',
    handler: (request, reply) => {
      const page = ledger.frontiers(afterParam(request, isHash), pageLimit(request));
      return sendKeyPage(reply, page.entries, page.nextAfter);
    },
  };

  const supply: Route = {
    method: 'GET',
    path: '/supply',
    description: 'Supply per asset and the conservation identity',
    handler: (_request, reply) => sendJson(reply, 200, supplyCache.get()),
  };

  const pending: Route = {
    method: 'GET',
    path: '/pending',
    description: 'All pending sends',
    handler: (request, reply) => {
      const all = ledger.pending().sort(comparePending);
      const offset = pageOffset(request);
      const items = pagingRequested(request) ? all.slice(offset, offset + pageLimit(request)) : all;
      return sendJsonStream(reply, jsonArrayChunks(chunked(items)));
    },
  };

  const pendingFor: Route = {
    method: 'GET',
    path: '/pending/{address}',
    description: 'Pending sends to one account',
    handler: (request, reply) => {
      const address = hexPathParam(request, 'address', 'invalid address');
      return sendJson(reply, 200, { address, pending: ledger.pendingFor(address).sort(comparePending) });
    },
  };

  const conflicts: Route = {
    method: 'GET',
    path: '/conflicts',
    description: 'Open conflicts',
    handler: (request: FastifyRequest, reply) => {
      const all = ledger.conflicts().sort((a, b) =>
        a.account_address !== b.account_address
          ? a.account_address < b.account_address ? -1 : 1
          : a.previous_hash < b.previous_hash ? -1 : a.previous_hash > b.previous_hash ? 1 : 0,
      );
      const offset = pageOffset(request);
      return sendJson(reply, 200, all.slice(offset, offset + pageLimit(request)));
    },
  };

  const conflictsFor: Route = {
    method: 'GET',
    path: '/conflicts/{account}',
    description: 'Open conflicts of one account',
    handler: (request, reply) => {
      const account = hexPathParam(request, 'account', 'invalid account');
      return sendJson(reply, 200, { address: account, conflicts: ledger.conflictsFor(account) });
    },
  };

  const delegation: Route = {
    method: 'GET',
    path: '/delegation',
    description: 'Representative vote weights in micro-XE',
    handler: (_request, reply) => sendJson(reply, 200, ledger.delegation()),
  };

  return { info, networkActivations, networkReadiness, frontiers, supply, pending, pendingFor, conflicts, conflictsFor, delegation };
}

function* chunked<T>(items: T[], size = 1000): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
