// A lease end to end on the dev network, everything real: the daemon as a child process with its
// SQLite store, the Docker backend, the SSH gateway, the HTTP tunnel, OpenSSH, and the `netnode`
// CLI a person would use. Balances are checked at every step against the leases.md formulas.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { devSeed } from '../../ledger/genesis/devnet.js';
import { emission, leaseStake } from '../../ledger/state/lease-math.js';
import { DAEMON_MAIN, freePort, PROJECT_ROOT, startDevNode, type DevNode } from '../integration/harness.js';

const DEV1 = accountAddress(publicKeyFromSeed(devSeed(1)));
const DEV2 = accountAddress(publicKeyFromSeed(devSeed(2)));
const XUSD = 1_000_000n;
const GRACE_NS = 30_000_000_000n; // devnet lease_settle_grace_ns
const GAP_NS = 25_000_000_000n; // devnet lease_force_settle_gap_ns

/** Run the real CLI; returns stdout, throws with stderr on a non-zero exit. */
function cli(args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [DAEMON_MAIN, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c));
    p.stderr.on('data', (c: Buffer) => (err += c));
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`netnode ${args.join(' ')} → exit ${code}\n${err}${out}`))));
  });
}

function field(output: string, name: string): string {
  const m = new RegExp(`^${name}: (.+)$`, 'm').exec(output);
  if (!m) throw new Error(`no "${name}:" line in:\n${output}`);
  return m[1]!;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('a lease end to end on devnet', { timeout: 240_000 }, () => {
  let node: DevNode;
  let nodeUrl: string;
  let sshPort: number;
  let dataDir: string;
  const wallet = join(mkdtempSync(join(tmpdir(), 'netnode-e2e-wallet-')), 'consumer');
  let consumer: string;

  async function startNode(extra: string[] = []): Promise<void> {
    node = await startDevNode({
      dataDir,
      keepData: true,
      args: ['--provider', '--vm-backend', 'docker', '--ssh-port', String(sshPort), '--ssh-bind', '127.0.0.1', '--max-lease-duration', '120s', ...extra],
    });
    nodeUrl = `http://127.0.0.1:${node.apiPort}`;
    // The provider issues (or reloads) its performance certificate just after start.
    await waitFor('the provider certificate', 30_000, async () => ((await fetch(`${nodeUrl}/certificate`)).status === 200 ? true : undefined));
  }

  async function get(path: string): Promise<Record<string, JsonValue>> {
    const res = await fetch(nodeUrl + path);
    expect(res.status, `GET ${path}`).toBe(200);
    return parseJson(await res.text()) as Record<string, JsonValue>;
  }

  async function balance(address: string, asset: 'XE' | 'XUSD'): Promise<bigint> {
    const b = await get(`/accounts/${address}/balance`);
    return ((b.balances as Record<string, bigint>)[asset] ?? 0n) as bigint;
  }

  async function lease(hash: string): Promise<Record<string, JsonValue>> {
    return get(`/leases/${hash}`);
  }

  async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${node.logs().slice(-4000)}`);
      await sleep(500);
    }
  }

  function containerId(hash: string): string {
    return execFileSync('docker', ['ps', '-aq', '--no-trunc', '--filter', `name=^netvm-${hash.slice(0, 12)}$`], { encoding: 'utf8' }).trim();
  }

  const as = (n: number): string[] => ['--node', nodeUrl, '--dev-key', String(n), '--wallet', wallet];
  const asConsumer = (): string[] => ['--node', nodeUrl, '--wallet', wallet];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'netnode-e2e-node-'));
    sshPort = await freePort();
    await startNode();
    consumer = field(await cli(['wallet', 'create', '--wallet', wallet]), 'address');
  });

  afterAll(async () => {
    await node?.stop();
  });

  it('funds the consumer and the provider: dev2 mints XUSD and sends it on', async () => {
    await cli(['mint', '1000', ...as(2)]);
    await cli(['send', consumer, '500', '--asset', 'XUSD', ...as(2)]);
    await cli(['send', DEV1, '100', '--asset', 'XUSD', ...as(2)]);
    await cli(['receive', ...asConsumer()]);
    await cli(['receive', ...as(1)]);
    expect(await balance(DEV2, 'XUSD')).toBe(400n * XUSD);
    expect(await balance(consumer, 'XUSD')).toBe(500n * XUSD);
    expect(await balance(DEV1, 'XUSD')).toBe(100n * XUSD);
  });

  let first: string;
  let firstCost: bigint;
  let firstStake: bigint;
  const xeBefore = { dev1: 0n };

  it('opens a lease on provider dev1; the node provisions, then accepts with attestations and stake', async () => {
    xeBefore.dev1 = await balance(DEV1, 'XE');
    const out = await cli(['lease', 'open', '--vcpus', '1', '--memory', '512', '--disk', '5', '--duration', '45s', '--wait', ...asConsumer()]);
    first = field(out, 'lease');
    expect(field(out, 'state')).toBe('accepted');
    const l = await lease(first);
    firstCost = l.cost as bigint;
    firstStake = leaseStake(firstCost, 5n);
    expect(l.state).toBe('accepted');
    expect(l.stake).toBe(firstStake);
    expect(l.locked_r).toBe(2000n);
    expect((l.start_time as bigint) > 0n).toBe(true);
    expect(await balance(consumer, 'XUSD')).toBe(500n * XUSD - firstCost);
    expect(await balance(DEV1, 'XUSD')).toBe(100n * XUSD - firstStake);
    const vm = await get(`/vms/${first}`);
    expect(vm.status).toBe('running');
    expect(containerId(first)).not.toBe('');
  });

  it('runs a command in the VM through the SSH gateway and through the HTTP tunnel', async () => {
    // No terminal to confirm host keys on: record them in a known_hosts file of the test's own.
    const hostKeys = ['-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${join(wallet, 'known_hosts')}`];
    const viaGateway = await cli(['ssh', first, '--gateway', `127.0.0.1:${sshPort}`, '--wallet', wallet, ...hostKeys, '--', 'echo', 'gateway-ok', '&&', 'hostname']);
    expect(viaGateway).toContain('gateway-ok');
    const viaTunnel = await cli(['ssh', first, '--node', nodeUrl, '--wallet', wallet, ...hostKeys, '--', 'echo', 'tunnel-ok']);
    expect(viaTunnel).toContain('tunnel-ok');
  });

  it('survives a SIGKILL of the node between accept and expiry: the VM is untouched', async () => {
    const before = containerId(first);
    await node.stop('SIGKILL');
    await startNode();
    expect(containerId(first)).toBe(before);
    expect(execFileSync('docker', ['inspect', '-f', '{{.State.Running}}', before], { encoding: 'utf8' }).trim()).toBe('true');
    expect((await get(`/vms/${first}`)).status).toBe('running');
  });

  it('settles after expiry: dev1 receives the emission, the stake comes back, the VM is gone', async () => {
    const settled = await waitFor('the provider to settle', 120_000, async () => {
      const l = await lease(first);
      return l.state === 'settled' ? l : undefined;
    });
    expect(settled.settled).toBe(true);
    expect(await balance(DEV1, 'XE')).toBe(xeBefore.dev1 + emission(firstCost, 2000n, 0n, 0n));
    expect(await balance(DEV1, 'XUSD')).toBe(100n * XUSD);
    expect(await balance(consumer, 'XUSD')).toBe(500n * XUSD - firstCost);
    await waitFor('the VM to be torn down', 60_000, async () => ((await get(`/vms/${first}`)).status === 'stopped' ? true : undefined));
    expect(containerId(first)).toBe('');
  });

  it('a lease the policy refuses stays created and the consumer cancels it: escrow refunded', async () => {
    const before = await balance(consumer, 'XUSD');
    const out = await cli(['lease', 'open', '--duration', '10m', ...asConsumer()]); // above --max-lease-duration
    const hash = field(out, 'lease');
    const cost = (await lease(hash)).cost as bigint;
    expect(await balance(consumer, 'XUSD')).toBe(before - cost);
    await sleep(3000); // several provider ticks: still not accepted
    expect((await lease(hash)).state).toBe('created');
    await cli(['lease', 'cancel', hash, ...asConsumer()]);
    expect((await lease(hash)).state).toBe('cancelled');
    expect(await balance(consumer, 'XUSD')).toBe(before);
    expect(containerId(hash)).toBe('');
  });

  it('with auto-settle off, the consumer force-settles after expiry + grace + gap: cost refunded, stake forfeited', async () => {
    await node.stop();
    await startNode(['--no-auto-settle']);
    const consumerBefore = await balance(consumer, 'XUSD');
    const providerBefore = await balance(DEV1, 'XUSD');
    const out = await cli(['lease', 'open', '--duration', '5s', '--wait', ...asConsumer()]);
    const hash = field(out, 'lease');
    const l = await lease(hash);
    expect(l.state).toBe('accepted');
    const cost = l.cost as bigint;
    const stake = leaseStake(cost, 5n);
    expect(await balance(DEV1, 'XUSD')).toBe(providerBefore - stake);
    const opensAt = (l.expires_at as bigint) + GRACE_NS + GAP_NS;
    const waitMs = Number((opensAt - BigInt(Date.now()) * 1_000_000n) / 1_000_000n) + 2000;
    if (waitMs > 0) await sleep(waitMs);
    expect((await lease(hash)).state).toBe('accepted'); // the provider never settled
    await cli(['lease', 'force-settle', hash, ...asConsumer()]);
    const after = await lease(hash);
    expect(after.state).toBe('unfulfilled');
    expect(after.settled).toBe(true);
    expect(await balance(consumer, 'XUSD')).toBe(consumerBefore);
    expect(await balance(DEV1, 'XUSD')).toBe(providerBefore - stake);
    await waitFor('the VM to be torn down', 60_000, async () => (containerId(hash) === '' ? true : undefined));
    const supply = await get('/supply');
    expect(supply.conserved).toBe(true);
  });
});
