// Liveness and readiness (api.md §6.7): a sampler takes a snapshot of the ledger every few seconds;
// `/health` and `/ready` (API and ops listener) and the metrics read the newest sample.

import { createHash } from 'node:crypto';
import type { LedgerService, LedgerStats } from '../ledger/service.js';

export const SAMPLE_INTERVAL_MS = 5_000;
const SAMPLER_ALIVE_MS = 45_000;
const SAMPLE_FRESH_MS = 30_000;
const RETRY_AFTER_S = '5';

export interface Sample {
  atMs: number;
  stats: LedgerStats;
  totalWeight: bigint;
  /** Weight of representatives known to be voting (without peers: this node's own account). */
  activeWeight: bigint;
  representatives: number;
  activeRepresentatives: number;
  /**
   * Taken when first read after the sample (a pass over every account): a node under load that
   * nobody probes pays nothing, where a pass every 5 s cost ~2 % of its event loop at 40,000
   * accounts and grows with the ledger.
   */
  readonly frontierFingerprint: string;
  /** When the final-height watermark last moved (ms), or when sampling started. */
  lastAdvanceMs: number;
}

export interface Check {
  name: string;
  ok: boolean;
  evaluated: boolean;
  detail: string;
}

export interface ProbeResult {
  ok: boolean;
  document: Record<string, unknown>;
  /** Headers to send (Cache-Control, and Retry-After on failure). */
  headers: Record<string, string>;
}

export interface StatusDeps {
  ledger: LedgerService;
  ownAddress: string;
  nodeId: string;
  version: string;
  peerCount: () => number;
  /** Whether a sync with a peer succeeded within the last 180 s; null when running standalone. */
  recentSync: () => boolean | null;
  /** The API is listening (or disabled). */
  serving: () => boolean;
  readyMinPeers: number;
  finalityStallNs: bigint;
}

/** `sha256` over sorted `account:frontier:block_count` lines, first 16 hex characters. */
export function frontierFingerprint(ledger: LedgerService): string {
  // Addresses are 64 hex characters, so lines sort exactly as their addresses do.
  const hash = createHash('sha256');
  let separator = '';
  for (const [address, frontier, blockCount] of ledger.sortedFrontiers()) {
    hash.update(`${separator}${address}:${frontier}:${blockCount}`);
    separator = '\n';
  }
  return hash.digest('hex').slice(0, 16);
}

export class NodeStatus {
  private latest: Sample | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly startedMs = Date.now();

  constructor(private readonly deps: StatusDeps) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  get newest(): Sample | null {
    return this.latest;
  }

  sample(): void {
    const { ledger, ownAddress } = this.deps;
    const now = Date.now();
    const stats = ledger.stats();
    const delegation = ledger.delegation();
    const own = delegation.weights[ownAddress] ?? 0n;
    const prev = this.latest;
    const advanced = prev === null || stats.finality_advances !== prev.stats.finality_advances;
    let fingerprint: string | undefined;
    this.latest = {
      atMs: now,
      stats,
      totalWeight: delegation.total_weight,
      activeWeight: own,
      representatives: Object.values(delegation.weights).filter((w) => w > 0n).length,
      activeRepresentatives: own > 0n ? 1 : 0,
      get frontierFingerprint() {
        return (fingerprint ??= frontierFingerprint(ledger));
      },
      lastAdvanceMs: advanced ? now : prev.lastAdvanceMs,
    };
  }

  private storeReadable(): boolean {
    try {
      this.deps.ledger.stats();
      return true;
    } catch {
      return false;
    }
  }

  health(): ProbeResult {
    const s = this.latest;
    const age = s ? Date.now() - s.atMs : Infinity;
    const checks: Check[] = [
      check('serving', this.deps.serving(), 'API listener accepting requests'),
      check('sampler_alive', age < SAMPLER_ALIVE_MS, s ? `newest sample ${(age / 1000).toFixed(1)}s old` : 'no sample yet'),
      check('store_readable', this.storeReadable(), 'ledger store answers reads'),
    ];
    const ok = checks.every((c) => c.ok);
    return probe(ok, 'unhealthy', checks, {
      status: ok ? 'ok' : 'unhealthy',
      ok,
      version: this.deps.version,
      network_id: this.deps.ledger.networkId,
      node_id: this.deps.nodeId,
      uptime_seconds: (Date.now() - this.startedMs) / 1000,
      checks,
      note: 'liveness only: says nothing about consensus (see /ready)',
    });
  }

  ready(): ProbeResult {
    const s = this.latest;
    const now = Date.now();
    const age = s ? now - s.atMs : Infinity;
    const peers = this.deps.peerCount();
    const sync = this.deps.recentSync();
    const total = s?.totalWeight ?? 0n;
    const active = s?.activeWeight ?? 0n;
    const backlog = s ? s.stats.unfinalized_positions > 0 : false;
    const stallMs = s && backlog ? now - s.lastAdvanceMs : 0;
    const stallLimitMs = Number(this.deps.finalityStallNs / 1_000_000n);
    const checks: Check[] = [
      check('live', this.health().ok, 'process is live'),
      check('sample_present', s !== null, s ? 'sample taken' : 'no sample yet'),
      check('sample_fresh', age < SAMPLE_FRESH_MS, s ? `${(age / 1000).toFixed(1)}s old` : 'no sample yet'),
      check('peers', peers >= this.deps.readyMinPeers, `${peers} connected, ${this.deps.readyMinPeers} required`),
      check('synced', sync === null || sync, sync === null ? 'standalone' : sync ? 'synced within 180s' : 'no successful sync within 180s'),
      check('delegated_weight', total > 0n, `${total} micro-XE delegated`),
      check('quorum_reachable', total > 0n && active * 100n >= total * 67n, `${active} of ${total} active`),
      check('finality_advancing', !backlog || stallMs <= stallLimitMs, backlog ? `watermark unchanged for ${(stallMs / 1000).toFixed(0)}s` : 'no backlog'),
    ];
    const ok = checks.every((c) => c.ok);
    return probe(ok, 'not ready', checks, {
      status: ok ? 'ready' : 'not_ready',
      ready: ok,
      checks,
      peer_count: peers,
      delegated_weight_micro_xe: total,
      active_representative_weight_micro_xe: active,
      representatives: s?.representatives ?? 0,
      active_representatives: s?.activeRepresentatives ?? 0,
      quorum_margin_ratio: total > 0n ? Number((active * 1_000_000n) / total) / 1_000_000 - 0.67 : 0,
      finality_stall_seconds: Math.floor(stallMs / 1000),
      finality_advances: s?.stats.finality_advances ?? 0n,
      unfinalized_positions: s?.stats.unfinalized_positions ?? 0,
      conflicts_open: s?.stats.conflicts_open ?? 0,
      frontier_fingerprint: s?.frontierFingerprint ?? '',
      sample_age_seconds: s ? age / 1000 : 0,
    });
  }
}

function check(name: string, ok: boolean, detail: string): Check {
  return { name, ok, evaluated: true, detail };
}

function probe(ok: boolean, failWord: string, checks: Check[], doc: Record<string, unknown>): ProbeResult {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  if (ok) return { ok, document: doc, headers };
  headers['Retry-After'] = RETRY_AFTER_S;
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  return { ok, document: { ...doc, error: `${failWord}: ${failed.join(', ')}` }, headers };
}
