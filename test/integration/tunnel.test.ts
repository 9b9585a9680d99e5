// `POST /tunnel/{leaseHash}/tcp` (api.md §8.3) on the daemon's real API server: the documented
// answers in order, the exact raw `200` line, an OpenSSH session and scp through it (ProxyCommand)
// to a Docker-backend VM, bytes sent behind the request head, half-close, caps, idle limit, and no
// HTTP server timeout cutting it. Refused requests are aimed at leases whose "VM" is a plain sshd of
// our own, whose log counts every TCP connection: nothing may reach it.

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientKey } from '../../agent/api/client-key.js';
import { buildApiServer } from '../../agent/api/server.js';
import { openHttpTunnel, runTunnelCommand } from '../../agent/cli/tunnel.js';
import { runSshCommand } from '../../agent/cli/ssh.js';
import { LocalNetwork } from '../../agent/network/local.js';
import type { RemoteTunnelDialer } from '../../gateway/lease-access.js';
import { TunnelRegistry } from '../../gateway/tunnel/registry.js';
import { enableTunnelTakeover } from '../../gateway/tunnel/takeover.js';
import { TUNNEL_OK, tunnelRoute } from '../../gateway/tunnel/tunnel.js';
import { startDockerLeaseVm, type LeaseVm } from './helpers/lease-vm.js';
import { freePort, startStandInVm, type StandInVm } from './helpers/stand-in-vm.js';
import {
  LeaseTable,
  newAccessKey,
  OTHER_PROVIDER,
  PROVIDER,
  randomLeaseHash,
  sshClientConfig,
  type AccessKey,
} from './helpers/gateway-fixtures.js';

const run = promisify(execFile);
const PROXY = join(import.meta.dirname, 'helpers', 'tunnel-proxy.mjs');

let dir: string;
let vm: LeaseVm;
let counted: StandInVm;
let access: AccessKey;
let config: string;
let api: FastifyInstance;
let apiUrl: string;
let small: FastifyInstance;
let smallUrl: string;
let sink: Server;
const leases = new LeaseTable();
const lease = randomLeaseHash();
/** Served like `lease`, but its VM is the connection-counting sshd. */
const countedLease = randomLeaseHash();
const sinkLease = randomLeaseHash();
const smallRegistry = new TunnelRegistry(8, 2);

// The peerless Network of wave 1 behind the tunnel's relay port, as the composition root wires it.
const network = new LocalNetwork('12D3KooWtest');
const remote: RemoteTunnelDialer = { open: (provider, hash, sig) => network.openTunnel(provider, hash, sig) };

async function startApi(
  opts: { registry?: TunnelRegistry; idleMs?: number },
  shortTimeouts = false,
): Promise<{ app: FastifyInstance; url: string }> {
  const logger = pino({ level: 'silent' });
  const app = buildApiServer({
    routes: [tunnelRoute({ access: leases, remote, clientKey, logger, ...opts })],
    logger,
    adminToken: null,
    bind: '127.0.0.1',
    allowedHosts: [],
    corsOrigin: 'http://localhost:3000',
    rateLimit: false,
  });
  enableTunnelTakeover(app.server);
  if (shortTimeouts) {
    // Node's request/headers timeout checker, and keep-alive, far below a tunnel's quiet period.
    // Read when the server starts listening (node's http.Server option of the same name).
    (app.server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval = 100;
    app.server.requestTimeout = 300;
    app.server.headersTimeout = 300;
    app.server.keepAliveTimeout = 300;
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` };
}

/**
 * A second "VM port" for byte-level checks: echoes, except that after `HALF\n` it collects until EOF
 * and then answers `got <n>` and ends.
 */
function startSink(): Promise<Server> {
  const srv = createServer({ allowHalfOpen: true }, (s) => {
    let mode: 'unknown' | 'echo' | 'half' = 'unknown';
    let count = 0;
    s.on('data', (d: Buffer) => {
      if (mode === 'unknown') mode = d.subarray(0, 5).toString() === 'HALF\n' ? 'half' : 'echo';
      if (mode === 'echo') s.write(d);
      else count += d.length;
    });
    s.on('end', () => (mode === 'half' ? s.end(`got ${count - 5}`) : s.end()));
    s.on('error', () => {});
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** One request on a fresh connection; reads until the server closes it. */
function rawPost(url: string, path: string, headers: Record<string, string>, hostHeader?: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const host = hostHeader ?? new URL(url).host;
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname);
    const lines = [`POST ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    s.write(lines.join('\r\n') + '\r\n\r\n');
    let data = '';
    s.on('data', (d: Buffer) => (data += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => {
      const end = data.indexOf('\r\n\r\n');
      resolve({ status: Number(data.slice(9, 12)), head: data.slice(0, end), body: data.slice(end + 4) });
    });
  });
}

function headerOf(answer: RawAnswer, name: string): string | undefined {
  const re = new RegExp(`^${name}: (.*)$`, 'im');
  return re.exec(answer.head)?.[1]?.trim();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netnode-tunnel-test-'));
  access = newAccessKey();
  config = sshClientConfig(dir, access.writeTo(dir, 'access_key'));
  vm = await startDockerLeaseVm(lease, access.pub, newAccessKey().line);
  counted = await startStandInVm([access.line]);
  leases.put(countedLease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: counted.host, port: counted.port });
  sink = await startSink();
  leases.put(lease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: vm.host, port: vm.port });
  leases.put(sinkLease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, {
    host: '127.0.0.1',
    port: (sink.address() as { port: number }).port,
  });
  ({ app: api, url: apiUrl } = await startApi({}));
  ({ app: small, url: smallUrl } = await startApi({ registry: smallRegistry, idleMs: 500 }));
}, 600_000);

afterAll(async () => {
  await api?.close();
  await small?.close();
  sink?.close();
  await vm?.stop();
  await counted?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('tunnel: checks in the documented order, nothing reaches the VM', () => {
  it('answers every refusal with the exact status and message', async () => {
    const created = randomLeaseHash();
    const expired = randomLeaseHash();
    const noKey = randomLeaseHash();
    const elsewhere = randomLeaseHash();
    const noVm = randomLeaseHash();
    const deadVm = randomLeaseHash();
    const ep = { host: counted.host, port: counted.port };
    leases.put(created, { state: 'created', provider: PROVIDER, accessPubKey: access.pub }, ep);
    leases.put(expired, { state: 'expired', provider: PROVIDER, accessPubKey: access.pub }, ep);
    leases.put(noKey, { state: 'accepted', provider: PROVIDER, accessPubKey: '' }, ep);
    leases.put(elsewhere, { state: 'accepted', provider: OTHER_PROVIDER, accessPubKey: access.pub });
    leases.put(noVm, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub });
    const closedPort = await freePort();
    leases.put(deadVm, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: '127.0.0.1', port: closedPort });
    const other = newAccessKey();
    const before = counted.connections();

    const cases: [string, Record<string, string>, number, string][] = [
      [countedLease.toUpperCase(), { 'X-Signature': access.sign(countedLease) }, 400, 'invalid lease hash'],
      [countedLease.slice(0, 63), { 'X-Signature': access.sign(countedLease) }, 400, 'invalid lease hash'],
      [randomLeaseHash(), { 'X-Signature': access.sign(countedLease) }, 404, 'lease not found'],
      [created, { 'X-Signature': access.sign(created) }, 410, 'lease not active'],
      [expired, { 'X-Signature': access.sign(expired) }, 410, 'lease not active'],
      [noKey, {}, 403, 'lease has no access key'],
      [countedLease, {}, 401, 'missing X-Signature header'],
      [countedLease, { 'X-Signature': other.sign(countedLease) }, 403, 'signature verification failed'],
      [countedLease, { 'X-Signature': access.sign(created) }, 403, 'signature verification failed'],
      [countedLease, { 'X-Signature': access.sign(countedLease).toUpperCase() }, 403, 'signature verification failed'],
      [countedLease, { 'X-Signature': 'zz' }, 403, 'signature verification failed'],
      [elsewhere, { 'X-Signature': access.sign(elsewhere) }, 502, 'tunnel error: provider peer not found'],
      [noVm, { 'X-Signature': access.sign(noVm) }, 502, 'tunnel error: vm not found'],
      [deadVm, { 'X-Signature': access.sign(deadVm) }, 502, `tunnel error: vm dial failed: connect ECONNREFUSED 127.0.0.1:${closedPort}`],
    ];
    for (const [hash, headers, status, message] of cases) {
      const answer = await rawPost(apiUrl, `/tunnel/${hash}/tcp`, headers);
      expect([answer.status, answer.body], `${hash} ${JSON.stringify(headers)}`).toEqual([status, `{"error":"${message}"}\n`]);
      expect(headerOf(answer, 'content-type')).toMatch(/^application\/json/);
    }
    // Refused before the route (Host check): the connection is closed after the answer as well.
    const foreign = await rawPost(apiUrl, `/tunnel/${countedLease}/tcp`, { 'X-Signature': access.sign(countedLease) }, 'evil.example');
    expect([foreign.status, foreign.body]).toEqual([403, '{"error":"host not allowed"}\n']);
    expect(counted.connections()).toBe(before);
    // The counter does count: an accepted tunnel reaches that sshd.
    const ok = await openHttpTunnel(apiUrl, countedLease, access.sign(countedLease));
    const banner = await new Promise<string>((resolve) => {
      ok.once('data', (d: Buffer) => resolve(d.toString()));
      ok.resume();
    });
    ok.destroy();
    expect(banner).toMatch(/^SSH-2\.0-OpenSSH_/);
    expect(counted.connections()).toBe(before + 1);
  });
});

describe('tunnel: the byte pipe', () => {
  it('answers the exact raw 200 line and forwards bytes sent behind the request head', async () => {
    const { port } = new URL(apiUrl);
    const s = connect(Number(port), '127.0.0.1');
    // One write: the request head and the client's SSH banner together.
    s.write(`POST /tunnel/${countedLease}/tcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: ${access.sign(countedLease)}\r\n\r\nSSH-2.0-early_bytes\r\n`);
    let got = Buffer.alloc(0);
    await new Promise<void>((resolve, reject) => {
      s.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.includes('\r\n', TUNNEL_OK.length)) resolve();
      });
      s.on('error', reject);
      setTimeout(() => reject(new Error(`no banner; got ${JSON.stringify(got.toString())}`)), 10_000);
    });
    s.destroy();
    expect(got.subarray(0, TUNNEL_OK.length).toString('latin1')).toBe(TUNNEL_OK);
    expect(got.subarray(TUNNEL_OK.length).toString('latin1')).toMatch(/^SSH-2\.0-OpenSSH_/);
    // sshd saw our banner (it answers a valid client banner with its key exchange, not an error).
    await new Promise((r) => setTimeout(r, 200));
    expect(counted.log()).not.toMatch(/Bad protocol version identification 'POST/);
  });

  it('finds the end of a request head split across packets', async () => {
    const { port } = new URL(apiUrl);
    const s = connect(Number(port), '127.0.0.1');
    s.setNoDelay(true);
    const head = `POST /tunnel/${countedLease}/tcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: ${access.sign(countedLease)}\r\n\r\n`;
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.write(head.slice(0, -3));
    await new Promise((r) => setTimeout(r, 100));
    s.write(head.slice(-3) + 'SSH-2.0-split_head\r\n');
    const deadline = Date.now() + 10_000;
    while (!/OpenSSH_[^\r]*\r\n/.test(got) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    s.destroy();
    expect(got.startsWith(TUNNEL_OK)).toBe(true);
    expect(got.slice(TUNNEL_OK.length)).toMatch(/^SSH-2\.0-OpenSSH_/);
  });

  it('takes over a tunnel request pipelined behind a plain request, with the bytes and the half-close sent along', async () => {
    const { port } = new URL(apiUrl);
    const s = connect(Number(port), '127.0.0.1');
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const ended = new Promise<void>((resolve, reject) => {
      s.once('end', () => resolve());
      setTimeout(() => reject(new Error(`no end; got ${JSON.stringify(got)}`)), 10_000);
    });
    // One write and a FIN: a plain request, the tunnel request, bytes for the sink (which counts
    // what follows HALF\n until EOF, then answers and ends).
    s.end(
      `GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` +
        `POST /tunnel/${sinkLease}/tcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: ${access.sign(sinkLease)}\r\n\r\n` +
        'HALF\n12345678',
    );
    await ended;
    s.destroy();
    expect(got).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    const tunnelAt = got.indexOf(TUNNEL_OK);
    expect(tunnelAt).toBeGreaterThan(0);
    expect(got.slice(tunnelAt + TUNNEL_OK.length)).toBe('got 8');
  });

  it('serves a request asking for a protocol upgrade as plain HTTP', async () => {
    const { port } = new URL(apiUrl);
    const s = connect(Number(port), '127.0.0.1');
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.write('GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    const deadline = Date.now() + 10_000;
    while (!got.endsWith('}\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    s.destroy();
    expect(got).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(got.slice(got.indexOf('\r\n\r\n') + 4)).toBe('{"error":"not found"}\n');
  });

  it('answers a tunnel request that declares a body 500 hijacking not supported', async () => {
    const { port } = new URL(apiUrl);
    const s = connect(Number(port), '127.0.0.1');
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
    s.write(`POST /tunnel/${sinkLease}/tcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: ${access.sign(sinkLease)}\r\nContent-Length: 2\r\n\r\nhi`);
    await closed;
    expect(got).toMatch(/^HTTP\/1\.1 500 Internal Server Error\r\n/);
    expect(got.slice(got.indexOf('\r\n\r\n') + 4)).toBe('{"error":"hijacking not supported"}\n');
  });

  it('carries a full OpenSSH session (ProxyCommand) and an scp of 4 MiB', async () => {
    const proxy = `ProxyCommand=${process.execPath} ${PROXY} ${apiUrl} ${lease} ${access.sign(lease)}`;
    const { stdout, stderr } = await run('ssh', ['-F', config, '-o', proxy, 'root@vm', 'echo via-tunnel; whoami'], { timeout: 30_000 });
    expect(stderr).toBe('');
    expect(stdout).toBe('via-tunnel\nroot\n');

    const src = join(dir, 'scp-src.bin');
    const back = join(dir, 'scp-back.bin');
    const bytes = randomBytes(4 * 1024 * 1024);
    writeFileSync(src, bytes);
    await run('scp', ['-F', config, '-o', proxy, src, 'root@vm:/root/scp-dst.bin'], { timeout: 30_000 });
    await run('scp', ['-F', config, '-o', proxy, 'root@vm:/root/scp-dst.bin', back], { timeout: 30_000 });
    expect(readFileSync(back).equals(bytes)).toBe(true);
  });

  it('pipes 16 MiB both ways intact and propagates a half-close in both directions', async () => {
    const sig = access.sign(sinkLease);
    const echo = await openHttpTunnel(apiUrl, sinkLease, sig);
    const payload = randomBytes(16 * 1024 * 1024);
    const digest = createHash('sha256');
    let received = 0;
    const done = new Promise<void>((resolve) => {
      echo.on('data', (d: Buffer) => {
        digest.update(d);
        received += d.length;
        if (received === payload.length) resolve();
      });
    });
    echo.resume();
    echo.write(payload);
    await done;
    echo.destroy();
    expect(digest.digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));

    // The client half-closes; the VM side sees EOF, answers, and its EOF comes back.
    const half = await openHttpTunnel(apiUrl, sinkLease, sig);
    let answer = '';
    half.on('data', (d: Buffer) => (answer += d.toString()));
    const ended = new Promise<void>((resolve) => half.once('end', () => resolve()));
    half.resume();
    half.write('HALF\n');
    half.end('x'.repeat(1000));
    await ended;
    expect(answer).toBe('got 1000');
    half.destroy();
  });

  it('caps tunnels at 8 per client (429) and at the node limit (503, Retry-After: 5)', async () => {
    const sig = access.sign(sinkLease);
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 8; i++) open.push(await openHttpTunnel(apiUrl, sinkLease, sig));
      const ninth = await rawPost(apiUrl, `/tunnel/${sinkLease}/tcp`, { 'X-Signature': sig });
      expect([ninth.status, ninth.body]).toEqual([429, '{"error":"too many tunnels from this client"}\n']);
      expect(headerOf(ninth, 'retry-after')).toBeDefined();
      open.pop()!.destroy();
      await new Promise((r) => setTimeout(r, 100));
      open.push(await openHttpTunnel(apiUrl, sinkLease, sig));
    } finally {
      for (const s of open) s.destroy();
    }

    const two = [await openHttpTunnel(smallUrl, sinkLease, sig), await openHttpTunnel(smallUrl, sinkLease, sig)];
    try {
      const third = await rawPost(smallUrl, `/tunnel/${sinkLease}/tcp`, { 'X-Signature': sig });
      expect([third.status, third.body]).toEqual([503, '{"error":"too many tunnels"}\n']);
      expect(headerOf(third, 'retry-after')).toBe('5');
    } finally {
      for (const s of two) s.destroy();
    }
  });

  it('no HTTP server timeout cuts a quiet tunnel; the idle limit does', async () => {
    const checker = await startApi({}, true);
    try {
      const quiet = await openHttpTunnel(checker.url, sinkLease, access.sign(sinkLease));
      await new Promise((r) => setTimeout(r, 2500));
      const back = new Promise<string>((resolve) => quiet.once('data', (d: Buffer) => resolve(d.toString())));
      let quietClosed = false;
      quiet.once('end', () => (quietClosed = true));
      quiet.resume();
      expect(quietClosed).toBe(false);
      quiet.write('still-open');
      expect(await back).toBe('still-open');
      quiet.destroy();
    } finally {
      await checker.app.close();
    }

    // The idle limit (500 ms on this route instead of 1 h): a chatty tunnel lives, a quiet one closes.
    const sig = access.sign(sinkLease);
    const chatty = await openHttpTunnel(smallUrl, sinkLease, sig);
    const idle = await openHttpTunnel(smallUrl, sinkLease, sig);
    const idleClosed = new Promise<number>((resolve) => {
      const t0 = Date.now();
      // The client keeps its half open (allowHalfOpen): the node's close shows as EOF.
      idle.once('end', () => resolve(Date.now() - t0));
    });
    let chattyClosed = false;
    chatty.on('end', () => (chattyClosed = true));
    chatty.on('data', () => {});
    chatty.resume();
    idle.resume();
    idle.on('data', () => {});
    const ticker = setInterval(() => chatty.write('.'), 150);
    const closedAfter = await idleClosed;
    await new Promise((r) => setTimeout(r, 600));
    clearInterval(ticker);
    expect(closedAfter).toBeGreaterThanOrEqual(400);
    expect(chattyClosed).toBe(false);
    chatty.destroy();
  });
});

describe('tunnel: lease end', () => {
  it('closes every tunnel of a lease that left accepted (registry.closeLease)', async () => {
    const a = await openHttpTunnel(smallUrl, sinkLease, access.sign(sinkLease));
    const ended = new Promise<void>((resolve) => a.once('end', () => resolve()));
    a.resume();
    expect(smallRegistry.open).toBe(1);
    smallRegistry.closeLease(sinkLease);
    await ended;
    expect(smallRegistry.open).toBe(0);
    a.destroy();
  });
});

describe('tunnel: command line', () => {
  it('netnode tunnel --local-port forwards scp; netnode ssh runs a command with the wallet access key', async () => {
    const wallet = join(dir, 'wallet');
    mkdirSync(join(wallet, 'access'), { recursive: true, mode: 0o700 });
    writeFileSync(join(wallet, 'access', `${lease}.key`), access.seed, { mode: 0o600 });

    const port = await freePort();
    const stop = new AbortController();
    const running = runTunnelCommand([lease, '--local-port', String(port), '--node', apiUrl, '--wallet', wallet], stop.signal);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const src = join(dir, 'cli-src.bin');
      const bytes = randomBytes(1024 * 1024);
      writeFileSync(src, bytes);
      await run('scp', ['-F', config, '-P', String(port), src, 'root@127.0.0.1:/root/cli-dst.bin'], { timeout: 30_000 });
      const { stdout } = await run('ssh', ['-F', config, '-p', String(port), 'root@127.0.0.1', 'sha256sum /root/cli-dst.bin']);
      expect(stdout.split(' ')[0]).toBe(createHash('sha256').update(bytes).digest('hex'));
    } finally {
      stop.abort();
    }
    expect(await running).toBe(0);

    const marker = '/root/cli-ssh.txt';
    const opts = ['-o', 'UserKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=no', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR'];
    const code = await runSshCommand([lease, '--node', apiUrl, '--wallet', wallet, ...opts, '--', `echo cli-ssh > ${marker}; exit 3`]);
    expect(code).toBe(3);
    const proxy = `ProxyCommand=${process.execPath} ${PROXY} ${apiUrl} ${lease} ${access.sign(lease)}`;
    const { stdout: markerText } = await run('ssh', ['-F', config, '-o', proxy, 'root@vm', `cat ${marker}`]);
    expect(markerText).toBe('cli-ssh\n');

    // No access key in the wallet for this lease: refused before any connection.
    expect(await runSshCommand([randomLeaseHash(), '--node', apiUrl, '--wallet', join(dir, 'empty-wallet')])).toBe(1);
  });
});
