// Desired state (leases, through LeaseView) against actual state (the backend) and the persisted
// VM records (provider.md §5.5, §10; DECISIONS.md "VMs").
//
// * `ensure(lease)`: provision before the accept; idempotent (a running or failed record is returned
//   as is, a concurrent call joins the attempt under way).
// * `teardown(leaseHash)`: cancel any attempt, remove the machine, record `stopped`.
// * `reconcile()`, at start and periodically: adopt machines of live accepted leases as they are
//   (a restart never destroys a tenant machine), re-provision accepted leases whose machine is gone,
//   tear down machines of terminal leases and of accepted leases past expiry + settle grace, leave
//   leases in flight (`created`) alone, forget ended records after an hour.
// All operations on one lease are serialized.

import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { ObservedVm, VmBackend } from './backend.js';
import { generateCredentials } from './credentials.js';
import { withFloors, type Resources } from './floors.js';
import { isPastGrace, isTerminal, type LeaseFacts, type LeaseView } from './lease-view.js';
import { VM_STATUSES, type VmRecord, type VmRecords, type VmStatus } from './records.js';

/** What `ensure` needs of a lease. */
export type VmRequest = Pick<LeaseFacts, 'leaseHash' | 'vcpus' | 'memoryMb' | 'diskGb' | 'accessPubKey'>;

export interface ReconcilerOptions {
  backend: VmBackend;
  records: VmRecords;
  leases: LeaseView;
  /** The provider gateway's key line (`ssh-ed25519 <base64>`), installed for root in every VM. */
  gatewayAuthorizedKey: string;
  logger: Logger;
  registry: Registry;
  /** Provisioning gives up after this long (the accept must follow within 60 s of the lease). */
  provisionTimeoutMs?: number;
  /** A record whose lease this node has never heard of is torn down once it is this old. */
  unknownLeaseStaleNs?: bigint;
  now?: () => bigint;
}

const DEFAULT_PROVISION_TIMEOUT_MS = 50_000;
const DEFAULT_UNKNOWN_LEASE_STALE_NS = 600_000_000_000n;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function gaugeIn(registry: Registry): Gauge<'status' | 'backend'> {
  const existing = registry.getSingleMetric('net_vms');
  if (existing) return existing as Gauge<'status' | 'backend'>;
  return new Gauge({
    name: 'net_vms',
    help: 'VM records of this provider by status and backend',
    labelNames: ['status', 'backend'],
    registers: [registry],
  });
}

export class Reconciler {
  private readonly backend: VmBackend;
  private readonly records: VmRecords;
  private readonly leases: LeaseView;
  private readonly gatewayKey: string;
  private readonly log: Logger;
  private readonly gauge: Gauge<'status' | 'backend'>;
  private readonly provisionTimeoutMs: number;
  private readonly unknownStaleNs: bigint;
  private readonly now: () => bigint;
  /** Tail of the operation chain per lease. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Provisioning attempts under way: joined by `ensure`, cancelled by `teardown`. */
  private readonly attempts = new Map<string, { result: Promise<VmRecord>; abort: AbortController }>();
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;

  constructor(opts: ReconcilerOptions) {
    this.backend = opts.backend;
    this.records = opts.records;
    this.leases = opts.leases;
    this.gatewayKey = opts.gatewayAuthorizedKey;
    this.log = opts.logger.child({ component: 'vms', backend: opts.backend.name });
    this.gauge = gaugeIn(opts.registry);
    this.provisionTimeoutMs = opts.provisionTimeoutMs ?? DEFAULT_PROVISION_TIMEOUT_MS;
    this.unknownStaleNs = opts.unknownLeaseStaleNs ?? DEFAULT_UNKNOWN_LEASE_STALE_NS;
    this.now = opts.now ?? (() => BigInt(Date.now()) * 1_000_000n);
    this.updateGauge();
  }

  get(leaseHash: string): VmRecord | null {
    return this.records.get(leaseHash);
  }

  list(): VmRecord[] {
    return this.records.list();
  }

  /** VMs running or being provisioned and what they occupy (floors applied), for the capacity gate. */
  committed(): { count: number; used: Resources } {
    const used: Resources = { vcpus: 0, memoryMb: 0, diskGb: 0 };
    let count = 0;
    for (const rec of this.records.list()) {
      if (rec.status !== 'provisioning' && rec.status !== 'running') continue;
      const r = withFloors(rec.resources);
      count += 1;
      used.vcpus += r.vcpus;
      used.memoryMb += r.memoryMb;
      used.diskGb += r.diskGb;
    }
    return { count, used };
  }

  /** Provisions the lease's VM unless a record already settles the question; resolves to the record. */
  ensure(lease: VmRequest): Promise<VmRecord> {
    const attempt = this.attempts.get(lease.leaseHash);
    if (attempt) return attempt.result;
    return this.withLease(lease.leaseHash, () => {
      const rec = this.records.get(lease.leaseHash);
      if (rec && rec.status !== 'provisioning') return Promise.resolve(rec);
      // No record, or a `provisioning` record left by a process that died mid-attempt: (re)do it.
      return this.provision(lease, rec);
    });
  }

  /** Removes the lease's machine and records `stopped` (a `failed` record stays `failed`). */
  async teardown(leaseHash: string): Promise<VmRecord | null> {
    this.attempts.get(leaseHash)?.abort.abort(new Error('provisioning cancelled by teardown'));
    return this.withLease(leaseHash, () => this.destroy(leaseHash, 'teardown'));
  }

  /** One reconciliation pass; concurrent callers share the pass under way. */
  reconcile(): Promise<void> {
    this.pass ??= this.reconcileOnce().finally(() => {
      this.pass = null;
    });
    return this.pass;
  }

  /** Reconciles now, then every `intervalMs` (10 s; 1 s on devnet). */
  async start(intervalMs: number): Promise<void> {
    await this.reconcile();
    this.timer = setInterval(() => {
      this.reconcile().catch((err) => this.log.error({ error: errorText(err) }, 'vm reconcile failed'));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pass;
  }

  private withLease<T>(leaseHash: string, task: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(leaseHash) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    this.locks.set(leaseHash, tail);
    void tail.then(() => {
      if (this.locks.get(leaseHash) === tail) this.locks.delete(leaseHash);
    });
    return next;
  }

  /** Runs under the lease's lock. Keeps the credentials and created_at of an earlier record. */
  private provision(lease: VmRequest, previous: VmRecord | null): Promise<VmRecord> {
    const abort = new AbortController();
    const result = this.runProvision(lease, previous, abort.signal);
    this.attempts.set(lease.leaseHash, { result, abort });
    void result.finally(() => this.attempts.delete(lease.leaseHash)).catch(() => undefined);
    return result;
  }

  private async runProvision(lease: VmRequest, previous: VmRecord | null, cancel: AbortSignal): Promise<VmRecord> {
    const start: VmRecord = {
      leaseHash: lease.leaseHash,
      backend: this.backend.name,
      backendId: '',
      status: 'provisioning',
      error: '',
      resources: { vcpus: lease.vcpus, memoryMb: lease.memoryMb, diskGb: lease.diskGb },
      credentials: previous?.credentials ?? generateCredentials(),
      createdAt: previous?.createdAt ?? this.now(),
      ssh: null,
      endedAt: null,
    };
    this.transition(previous?.status ?? null, start);
    const timeout = AbortSignal.timeout(this.provisionTimeoutMs);
    try {
      const handle = await this.backend.create(
        {
          leaseHash: lease.leaseHash,
          vcpus: lease.vcpus,
          memoryMb: lease.memoryMb,
          diskGb: lease.diskGb,
          accessPubKey: lease.accessPubKey,
          gatewayAuthorizedKey: this.gatewayKey,
          username: start.credentials.username,
          password: start.credentials.password,
        },
        AbortSignal.any([cancel, timeout]),
      );
      return this.transition('provisioning', { ...start, status: 'running', backendId: handle.backendId, ssh: handle.ssh });
    } catch (err) {
      const reason = timeout.aborted
        ? `provisioning did not finish within ${this.provisionTimeoutMs / 1000} s`
        : cancel.aborted ? errorText(cancel.reason) : errorText(err);
      try {
        await this.backend.destroy(lease.leaseHash);
      } catch (cleanupErr) {
        this.log.warn({ lease_hash: lease.leaseHash, error: errorText(cleanupErr) }, 'vm cleanup after failure failed');
      }
      return this.transition('provisioning', { ...start, status: 'failed', error: reason, endedAt: this.now() });
    }
  }

  private async destroy(leaseHash: string, why: string): Promise<VmRecord | null> {
    await this.backend.destroy(leaseHash);
    const rec = this.records.get(leaseHash);
    if (!rec || rec.status === 'stopped' || rec.status === 'failed') return rec;
    return this.transition(rec.status, { ...rec, status: 'stopped', ssh: null, endedAt: this.now() }, why);
  }

  private async reconcileOnce(): Promise<void> {
    const now = this.now();
    const forgotten = this.records.forgetEnded(now);
    if (forgotten > 0) this.log.info({ count: forgotten }, 'ended vm records forgotten');
    const observed = new Map((await this.backend.list()).map((o) => [o.leaseHash, o]));
    const candidates = new Set<string>(observed.keys());
    for (const rec of this.records.list()) {
      if (rec.status === 'provisioning' || rec.status === 'running') candidates.add(rec.leaseHash);
    }
    for (const lease of this.leases.listProvided()) {
      if (lease.state === 'accepted' && !isPastGrace(lease, now)) candidates.add(lease.leaseHash);
    }
    for (const leaseHash of candidates) {
      if (this.attempts.has(leaseHash)) continue;
      try {
        await this.withLease(leaseHash, () => this.reconcileLease(leaseHash, observed.get(leaseHash) ?? null, now));
      } catch (err) {
        this.log.error({ lease_hash: leaseHash, error: errorText(err) }, 'vm reconcile of lease failed');
      }
    }
    this.updateGauge();
  }

  private async reconcileLease(leaseHash: string, seen: ObservedVm | null, now: bigint): Promise<void> {
    const lease = this.leases.get(leaseHash);
    const rec = this.records.get(leaseHash);
    if (lease === null) {
      // Not yet known here: in flight, unless our own record of it is stale.
      if (rec && now - rec.createdAt > this.unknownStaleNs) await this.destroy(leaseHash, 'lease unknown and stale');
      else if (!rec) this.log.warn({ lease_hash: leaseHash }, 'vm without record for an unknown lease left alone');
      return;
    }
    if (isTerminal(lease.state) || isPastGrace(lease, now)) {
      if (seen || rec?.status === 'running' || rec?.status === 'provisioning') {
        await this.destroy(leaseHash, isTerminal(lease.state) ? `lease ${lease.state}` : 'lease past expiry and settle grace');
      }
      return;
    }
    if (lease.state !== 'accepted') return; // `created`: the provider loop's attempt decides
    if (seen?.running) {
      if (!rec) {
        this.log.warn({ lease_hash: leaseHash }, 'running vm of an accepted lease has no record; left alone');
        return;
      }
      const moved = rec.ssh?.port !== seen.ssh?.port || rec.ssh?.host !== seen.ssh?.host || rec.backendId !== seen.backendId;
      if (rec.status !== 'running' || moved) {
        this.transition(rec.status, { ...rec, status: 'running', error: '', backendId: seen.backendId, ssh: seen.ssh, endedAt: null }, 'adopted');
      }
      return;
    }
    if (rec?.status === 'failed' || rec?.status === 'stopped') return;
    if (seen) await this.backend.destroy(leaseHash); // exists but not running: start over
    this.log.info({ lease_hash: leaseHash }, 'vm of accepted lease missing; re-provisioning');
    await this.provision(lease, rec);
  }

  private transition(from: VmStatus | null, rec: VmRecord, reason?: string): VmRecord {
    this.records.put(rec);
    const fields = {
      lease_hash: rec.leaseHash,
      backend_id: rec.backendId,
      from,
      to: rec.status,
      ...(rec.ssh ? { ssh_port: rec.ssh.port } : {}),
      ...(rec.error ? { error: rec.error } : {}),
      ...(reason ? { reason } : {}),
    };
    if (rec.status === 'failed') this.log.warn(fields, 'vm failed');
    else this.log.info(fields, `vm ${rec.status}`);
    this.updateGauge();
    return rec;
  }

  private updateGauge(): void {
    const counts = new Map<VmStatus, number>(VM_STATUSES.map((s) => [s, 0]));
    for (const rec of this.records.list()) {
      if (rec.backend === this.backend.name) counts.set(rec.status, counts.get(rec.status)! + 1);
    }
    for (const [status, n] of counts) this.gauge.set({ status, backend: this.backend.name }, n);
  }
}
