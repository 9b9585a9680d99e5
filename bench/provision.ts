// VM provisioning overhead: "provision request → SSH-ready" through the Reconciler and the Docker
// backend (record in SQLite, network + firewall check, cpuset choice, credentials archive, start,
// SSH banner) against a bare `docker run -d -p 127.0.0.1::22 <same image>` until its sshd answers.
// Both wait for the same thing (an `SSH-` banner, same probe and polling); runs alternate, median of N.
// The backend keeps one network namespace started ahead of time (as a node does from its start on);
// every measurement waits until its refill has finished, so no background work overlaps one. For
// reference it also measures a backend without that (the VM joins the bridge itself) and a bare
// `docker run` on the VM network. Then the libvirt (qemu) figure: bench/provision-libvirt.ts.
// Run: npm run bench:provision  [-- --runs 5]

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import Docker from 'dockerode';
import { pino } from 'pino';
import { openDatabase } from '../ledger/store/db.js';
import { Registry } from 'prom-client';
import { DockerBackend } from '../provisioning/docker/backend.js';
import { buildDockerImage, dockerImageSettings } from '../provisioning/images/docker-image.js';
import type { LeaseFacts, LeaseView } from '../provisioning/lease-view.js';
import { Reconciler } from '../provisioning/reconciler.js';
import { VmRecords } from '../provisioning/records.js';
import { ed25519KeyLine } from '../provisioning/ssh-key-line.js';
import { waitForSshBanner } from '../provisioning/ssh-ready.js';
import { reportLibvirtProvisioning } from './provision-libvirt.js';
import { median } from './stats.js';

const run = promisify(execFile);
const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);
/** The libvirt (qemu) figure printed after the Docker one: a software-emulated boot takes ~10 s. */
const LIBVIRT_RUNS = 3;

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}

async function bareDockerRun(image: string, network?: string): Promise<number> {
  const t0 = performance.now();
  const { stdout } = await run('docker', ['run', '-d', ...(network ? ['--network', network] : []), '-p', '127.0.0.1::22', image]);
  const id = stdout.trim();
  const port = Number((await run('docker', ['port', id, '22/tcp'])).stdout.trim().split('\n')[0]!.split(':').pop());
  await waitForSshBanner({ host: '127.0.0.1', port }, { timeoutMs: 60_000 });
  const ms = performance.now() - t0;
  await run('docker', ['rm', '-f', id]);
  return ms;
}

async function main(): Promise<void> {
  const docker = new Docker();
  const { ref: image } = await buildDockerImage(docker, dockerImageSettings(), (l) => process.stderr.write(`${l}\n`));
  const dir = mkdtempSync(join(tmpdir(), 'netnode-bench-provision-'));
  const leases = new Map<string, LeaseFacts>();
  const view: LeaseView = { get: (h) => leases.get(h) ?? null, listProvided: () => [...leases.values()] };
  const records = new VmRecords(openDatabase(join(dir, 'node.db'))); // opened as the node opens its DB
  const gatewayAuthorizedKey = ed25519KeyLine(randomHex(32));
  const reconcilerOf = (backend: DockerBackend): Reconciler => new Reconciler({
    backend, records, leases: view, gatewayAuthorizedKey, logger: pino({ level: 'silent' }), registry: new Registry(),
  });
  const backend = new DockerBackend({ image });
  const coldBackend = new DockerBackend({ image, warmNetworks: 0 });
  const [reconciler, coldReconciler] = [reconcilerOf(backend), reconcilerOf(coldBackend)];
  await backend.check(); // network, firewall and the warm namespace set up once, as at node start
  await coldBackend.check();

  const provisioned: number[] = [];
  const provisionedCold: number[] = [];
  const bare: number[] = [];
  const bareOnNetwork: number[] = [];
  try {
    // One unmeasured round of each warms the page cache and Docker's layer store.
    await bareDockerRun(image);
    for (let i = 0; i <= RUNS; i++) {
      const lease: LeaseFacts = {
        leaseHash: randomHex(32), state: 'created', vcpus: 1, memoryMb: 1024, diskGb: 10,
        accessPubKey: randomHex(32), expiresAt: 0n, settleGraceNs: 0n,
      };
      leases.set(lease.leaseHash, lease);
      const coldLease: LeaseFacts = { ...lease, leaseHash: randomHex(32) };
      leases.set(coldLease.leaseHash, coldLease);
      const provisionOnce = async (r: Reconciler, l: LeaseFacts, into: number[]): Promise<void> => {
        await backend.warmed();
        const t0 = performance.now();
        const rec = await r.ensure(l);
        const ms = performance.now() - t0;
        if (rec.status !== 'running') throw new Error(`provisioning failed: ${rec.error}`);
        if (i > 0) into.push(ms);
        await r.teardown(l.leaseHash);
      };
      const doProvision = async (): Promise<void> => {
        await provisionOnce(reconciler, lease, provisioned);
        await provisionOnce(coldReconciler, coldLease, provisionedCold);
      };
      const doBare = async (): Promise<void> => {
        await backend.warmed();
        const ms = await bareDockerRun(image);
        const onNet = await bareDockerRun(image, 'netnode-vms');
        if (i > 0) {
          bare.push(ms);
          bareOnNetwork.push(onNet);
        }
      };
      if (i % 2 === 0) {
        await doProvision();
        await doBare();
      } else {
        await doBare();
        await doProvision();
      }
    }
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(', ');
  const [p, b, n] = [median(provisioned), median(bare), median(bareOnNetwork)];
  process.stdout.write(
    `provision request -> SSH-ready (Reconciler + DockerBackend), ms: ${fmt(provisioned)}; median ${p.toFixed(0)}\n` +
    `  same, without a warm network namespace, ms: ${fmt(provisionedCold)}; median ${median(provisionedCold).toFixed(0)}\n` +
    `bare docker run -> sshd answering, ms: ${fmt(bare)}; median ${b.toFixed(0)}\n` +
    `bare docker run --network netnode-vms -> sshd answering, ms: ${fmt(bareOnNetwork)}; median ${n.toFixed(0)}\n` +
    `ratio provision/bare: ${(p / b).toFixed(2)} (target <= 1.25); provision/bare-on-vm-network: ${(p / n).toFixed(2)}; ` +
    `runs: ${RUNS}, image ${image}\n\n`,
  );
  await reportLibvirtProvisioning(LIBVIRT_RUNS);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
