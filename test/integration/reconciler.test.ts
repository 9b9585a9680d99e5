// Reconciler with the real Docker backend, a real SQLite file and the real ssh client: provisioning
// records, idempotence, the failure path, teardown by lease state, re-provisioning, forgetting, and
// adoption after the provider process is SIGKILLed. Fails (never skips) without Docker.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DockerBackend, NETNS_LABEL } from '../../provisioning/docker/backend.js';
import { NetworkPool } from '../../provisioning/docker/network-pool.js';
import type { LeaseFacts } from '../../provisioning/lease-view.js';
import { Reconciler } from '../../provisioning/reconciler.js';
import { VmRecords } from '../../provisioning/records.js';
import { containersOfLease, docker, failEveryTestOnSetupError, randomLeaseHash, requireDockerImage } from './helpers/docker-vm.js';
import { LeaseBook, leaseToJson } from './helpers/lease-book.js';
import { sshKeygen, sshRun, type KeyPair } from './helpers/vm-ssh.js';

const HOUR_NS = 3_600_000_000_000n;

describe('Reconciler (real Docker, real SQLite)', () => {
  let image: string;
  let dir: string;
  let leaseKey: KeyPair;
  let gatewayKey: KeyPair;
  const touched: string[] = [];

  function lease(state: LeaseFacts['state'], overrides: Partial<LeaseFacts> = {}): LeaseFacts {
    const leaseHash = randomLeaseHash();
    touched.push(leaseHash);
    return {
      leaseHash, state, vcpus: 1, memoryMb: 512, diskGb: 5, accessPubKey: leaseKey.hex,
      expiresAt: BigInt(Date.now() + 3_600_000) * 1_000_000n, settleGraceNs: 60_000_000_000n, ...overrides,
    };
  }

  interface Harness {
    reconciler: Reconciler;
    leases: LeaseBook;
    records: VmRecords;
    registry: Registry;
    logLines: Record<string, unknown>[];
    clock: { now: bigint };
  }

  function harness(opts: { image?: string; dbPath?: string; leases?: LeaseBook } = {}): Harness {
    const logLines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const clock = { now: BigInt(Date.now()) * 1_000_000n };
    const leases = opts.leases ?? new LeaseBook();
    const records = new VmRecords(new Database(opts.dbPath ?? join(dir, `${randomLeaseHash().slice(0, 8)}.db`)));
    const registry = new Registry();
    const reconciler = new Reconciler({
      backend: new DockerBackend({ image: opts.image ?? image }),
      records, leases, registry,
      gatewayAuthorizedKey: gatewayKey.line,
      logger: pino({ level: 'info' }, sink),
      now: () => clock.now,
    });
    return { reconciler, leases, records, registry, logLines, clock };
  }

  async function gauge(registry: Registry, status: string): Promise<number> {
    const metric = await registry.getSingleMetric('net_vms')!.get();
    return metric.values.find((v) => v.labels.status === status && v.labels.backend === 'docker')?.value ?? -1;
  }

  async function startedAt(backendId: string): Promise<string> {
    return (await docker.getContainer(backendId).inspect()).State.StartedAt;
  }

  const setup = failEveryTestOnSetupError();
  beforeAll(() => setup.run(async () => {
    image = await requireDockerImage();
    dir = mkdtempSync(join(tmpdir(), 'netnode-reconciler-test-'));
    leaseKey = sshKeygen(dir, 'lease');
    gatewayKey = sshKeygen(dir, 'gateway');
  }), 600_000);
  beforeEach(() => setup.check());

  afterAll(async () => {
    const backend = new DockerBackend({ image: image ?? 'unused' });
    for (const h of touched) await backend.destroy(h);
    // The killed child's spare warm namespace.
    await new NetworkPool({ docker, image: image ?? 'unused', network: 'netnode-vms', size: 0 }).removeOrphans();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('provisions once: concurrent and repeated ensure calls share one VM; logs and gauge follow', async () => {
    const h = harness();
    const l = h.leases.put(lease('created', { memoryMb: 300 }));
    const [first, second] = await Promise.all([h.reconciler.ensure(l), h.reconciler.ensure(l)]);
    expect(first.status).toBe('running');
    expect(second).toEqual(first);
    expect(first.credentials.username).toMatch(/^net-[0-9a-f]{8}$/);
    expect(first.credentials.password).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(first.resources).toEqual({ vcpus: 1, memoryMb: 300, diskGb: 5 }); // requested, not floored
    expect(first.ssh?.host).toBe('127.0.0.1');
    expect(first.error).toBe('');
    expect(h.records.get(l.leaseHash)).toEqual(first);
    expect(await containersOfLease(l.leaseHash)).toHaveLength(1);
    const again = await h.reconciler.ensure(l);
    expect(again.backendId).toBe(first.backendId);

    const login = await sshRun(first.ssh!, first.credentials.username, leaseKey, 'id -un');
    expect(login.stdout.trim()).toBe(first.credentials.username);

    const transitions = h.logLines.filter((x) => x.lease_hash === l.leaseHash).map((x) => `${x.from}->${x.to}`);
    expect(transitions).toEqual(['null->provisioning', 'provisioning->running']);
    expect(JSON.stringify(h.logLines)).not.toContain(first.credentials.password);
    expect(await gauge(h.registry, 'running')).toBe(1);
    expect(await gauge(h.registry, 'provisioning')).toBe(0);
    expect(h.reconciler.committed()).toEqual({ count: 1, used: { vcpus: 1, memoryMb: 512, diskGb: 5 } });

    await h.reconciler.teardown(l.leaseHash);
    expect(h.records.get(l.leaseHash)?.status).toBe('stopped');
    expect(await containersOfLease(l.leaseHash)).toEqual([]);
    expect(await gauge(h.registry, 'stopped')).toBe(1);
    expect(h.reconciler.committed()).toEqual({ count: 0, used: { vcpus: 0, memoryMb: 0, diskGb: 0 } });
  });

  it('ends in failed with a readable reason when the image is missing, and does not retry', async () => {
    const h = harness({ image: 'netnode-vm:missing000000' });
    const l = h.leases.put(lease('created'));
    const rec = await h.reconciler.ensure(l);
    expect(rec.status).toBe('failed');
    expect(rec.error).toBe('vm image netnode-vm:missing000000 is missing: build it with "netnode image build --backend docker"');
    expect(rec.endedAt).not.toBeNull();
    expect(await containersOfLease(l.leaseHash)).toEqual([]);
    expect(await gauge(h.registry, 'failed')).toBe(1);
    const warn = h.logLines.find((x) => x.to === 'failed');
    expect(warn?.error).toBe(rec.error);
    expect(await h.reconciler.ensure(l)).toEqual(rec);
  });

  it('follows the lease: leaves in-flight VMs alone, re-creates a vanished VM, tears down when settled, forgets after an hour', async () => {
    const h = harness();
    const l = h.leases.put(lease('created'));
    const rec = await h.reconciler.ensure(l);
    const started = await startedAt(rec.backendId);

    await h.reconciler.reconcile(); // created: in flight, untouched
    expect(await startedAt(rec.backendId)).toBe(started);
    expect(h.records.get(l.leaseHash)?.status).toBe('running');

    h.leases.setState(l.leaseHash, 'accepted');
    await h.reconciler.reconcile(); // accepted: adopted as is
    expect(await startedAt(rec.backendId)).toBe(started);

    await docker.getContainer(rec.backendId).remove({ force: true });
    await h.reconciler.reconcile(); // accepted but gone: re-provisioned with the same credentials
    const again = h.records.get(l.leaseHash)!;
    expect(again.status).toBe('running');
    expect(again.backendId).not.toBe(rec.backendId);
    expect(again.credentials).toEqual(rec.credentials);
    expect(again.createdAt).toBe(rec.createdAt);
    const login = await sshRun(again.ssh!, 'root', leaseKey, 'id -u');
    expect(login.stdout.trim()).toBe('0');

    h.leases.setState(l.leaseHash, 'settled');
    await h.reconciler.reconcile();
    const stopped = h.records.get(l.leaseHash)!;
    expect(stopped.status).toBe('stopped');
    expect(stopped.ssh).toBeNull();
    expect(await containersOfLease(l.leaseHash)).toEqual([]);

    h.clock.now += HOUR_NS - 1n;
    await h.reconciler.reconcile();
    expect(h.records.get(l.leaseHash)).not.toBeNull();
    h.clock.now += 2n;
    await h.reconciler.reconcile();
    expect(h.records.get(l.leaseHash)).toBeNull();
  });

  it('tears down an accepted lease past expiry + settle grace, and an expired one', async () => {
    const h = harness();
    const overdue = h.leases.put(lease('accepted'));
    const expired = h.leases.put(lease('accepted'));
    await Promise.all([h.reconciler.ensure(overdue), h.reconciler.ensure(expired)]);
    h.leases.put({ ...overdue, expiresAt: h.clock.now - overdue.settleGraceNs - 1n });
    h.leases.setState(expired.leaseHash, 'expired');
    await h.reconciler.reconcile();
    for (const x of [overdue, expired]) {
      expect(h.records.get(x.leaseHash)?.status).toBe('stopped');
      expect(await containersOfLease(x.leaseHash)).toEqual([]);
    }
    const reasons = h.logLines.filter((x) => x.to === 'stopped').map((x) => x.reason).sort();
    expect(reasons).toEqual(['lease expired', 'lease past expiry and settle grace']);
  });

  it('adopts a running VM untouched after the provider process is SIGKILLed', async () => {
    const dbPath = join(dir, 'restart.db');
    const l = lease('accepted');
    const configPath = join(dir, 'child.json');
    writeFileSync(configPath, JSON.stringify({ dbPath, image, gatewayLine: gatewayKey.line, lease: leaseToJson(l) }));
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'helpers/reconciler-child.ts'), configPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += String(c)));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c) => {
        out += String(c);
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
    });
    const fromChild = JSON.parse(line) as { status: string; backendId: string };
    expect(fromChild.status).toBe('running');
    const before = await docker.getContainer(fromChild.backendId).inspect();
    expect(before.Config.Labels[NETNS_LABEL]).toBeDefined(); // in a warm namespace, as on a node

    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const leases = new LeaseBook();
    leases.put(l);
    const h = harness({ dbPath, leases });
    await h.reconciler.reconcile();
    const rec = h.records.get(l.leaseHash)!;
    expect(rec.status).toBe('running');
    expect(rec.backendId).toBe(fromChild.backendId);
    const after = await docker.getContainer(fromChild.backendId).inspect();
    expect(after.State.StartedAt).toBe(before.State.StartedAt);
    expect(after.RestartCount).toBe(0);
    expect(after.State.Running).toBe(true);
    const login = await sshRun(rec.ssh!, rec.credentials.username, leaseKey, 'id -un');
    expect(login.stdout.trim()).toBe(rec.credentials.username);
    expect(h.logLines.some((x) => x.lease_hash === l.leaseHash && x.to === 'stopped')).toBe(false);
    expect(await gauge(h.registry, 'running')).toBe(1);
  });

  it('redoes a provisioning attempt that a dead process left behind', async () => {
    const h = harness();
    const l = h.leases.put(lease('created'));
    const rec = await h.reconciler.ensure(l);
    // As if the process died mid-attempt: the record says provisioning.
    h.records.put({ ...rec, status: 'provisioning', ssh: null, backendId: '' });
    const redone = await h.reconciler.ensure(l);
    expect(redone.status).toBe('running');
    expect(redone.credentials).toEqual(rec.credentials);
    expect(await containersOfLease(l.leaseHash)).toHaveLength(1);
    await h.reconciler.teardown(l.leaseHash);
  });
});
