// Tunnel and gateway overhead, measured in the same run against the same "VM". Throughput targets
// compare SSH transfers over each path, as DECISIONS.md ("Benchmarks") defines them:
//  1. scp of 256 MiB through the tunnel (ProxyCommand + ProxyUseFdpass: bench/tunnel-fdpass.py does the
//     HTTP handshake and hands the socket to ssh) vs straight to the VM's sshd (target ratio ≥ 0.8);
//  2. scp of 256 MiB through the SSH gateway (`-J`) vs OpenSSH's own `-J` through a plain sshd jump
//     host (target ratio ≥ 0.5);
//  3. 1-byte round-trip latency (p50 of 2000) through `POST /tunnel/{lease}/tcp` vs a direct TCP
//     connection to the same VM-side port (target: added p50 ≤ 0.2 ms);
//  4. raw bytes, reported beside them: bulk throughput of 256 MiB client → VM and VM → client through
//     the tunnel vs a direct TCP connection, with the CPU cost per GiB of each party.
// The VM is a real OpenSSH sshd on loopback (the gateway tests' stand-in), or with `--vm docker` a
// Docker-backend VM (then "direct" goes through Docker's published port too); the API server and the
// gateway run in this process, pinned to CPU 0; every client (node, ssh, scp) is pinned to CPU 1.
// The VM side (stand-in sshd, jump sshd, and a node sink/echo process for the raw figures) is started
// by this process after it pinned itself, so it inherits CPU 0: the provider's host is CPU 0, the
// client's machine CPU 1 (a Docker VM keeps its container's cpuset instead).
// aes128-gcm@openssh.com on every SSH hop. Median of --runs (default 5), runs interleaved (each pair
// alternates which goes first). The raw bulk runs also report CPU seconds per GiB moved of the
// client, the relay (this process) and the sink: on loopback everything is CPU-bound, and the relay,
// which receives and sends every byte, shares CPU 0 with the sink: those per-GiB costs allow a raw
// ratio of about max(client, sink) / max(client, sink + relay), printed alongside.
// Run: npm run bench:tunnel  [-- --runs 5 --mib 256 --vm sshd|docker]

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { pino } from 'pino';
import { clientKey, keyOfIp } from '../agent/api/client-key.js';
import { buildApiServer } from '../agent/api/server.js';
import { LocalNetwork } from '../agent/network/local.js';
import { SshGateway } from '../gateway/ssh/server.js';
import { gatewayVmPublicKeyLine } from '../gateway/ssh/keys.js';
import { enableTunnelTakeover } from '../gateway/tunnel/takeover.js';
import { tunnelRoute } from '../gateway/tunnel/tunnel.js';
import { startDockerLeaseVm } from '../test/integration/helpers/lease-vm.js';
import { startStandInVm } from '../test/integration/helpers/stand-in-vm.js';
import { LeaseTable, newAccessKey, PROVIDER, randomLeaseHash, sshClientConfig } from '../test/integration/helpers/gateway-fixtures.js';
import { cpuSeconds, median } from './stats.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, mib: { type: 'string', default: '256' }, vm: { type: 'string', default: 'sshd' } },
});
const RUNS = Number(values.runs);
const MIB = Number(values.mib);
const PING_COUNT = 2000;
const CLIENT_CPU = '1';
const SERVER_CPU = '0';
const FDPASS_HELPER = join(process.cwd(), 'bench', 'tunnel-fdpass.py');
// The helper starts once per scp, inside the timed transfer: the system interpreter, isolated and
// without site packages, starts in about 15 ms; a version manager's `python3` shim took about 90 ms,
// an eighth of a 256 MiB transfer, which is start-up cost and not tunnel throughput.
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3 -I -S' : 'python3 -I -S';

/**
 * The VM-side port for raw measurements, a process of its own (like the VM's sshd): `BULK\n` → count
 * to EOF and answer the count; `PULL <n>\n` → send n bytes and end; anything else is echoed.
 */
const SINK = String.raw`
import { createServer } from 'node:net';
const srv = createServer({ allowHalfOpen: true, noDelay: true }, (s) => {
  let mode = 'unknown';
  let count = 0;
  s.on('data', (d) => {
    if (mode === 'unknown') {
      const word = d.subarray(0, 5).toString();
      mode = word === 'BULK\n' ? 'bulk' : word === 'PULL ' ? 'pull' : 'echo';
      if (mode === 'pull') return push(Number(d.subarray(5, d.indexOf(10)).toString()));
    }
    if (mode === 'echo') s.write(d);
    else count += d.length;
  });
  const push = (left) => {
    const chunk = Buffer.alloc(256 * 1024, 7);
    const more = () => {
      while (left > 0) {
        left -= chunk.length;
        if (!s.write(chunk)) return void s.once('drain', more);
      }
      s.end();
    };
    more();
  };
  s.on('end', () => (mode === 'bulk' ? s.end(String(count - 5)) : mode === 'echo' && s.end()));
  s.on('error', () => {});
});
srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
`;

async function startSink(): Promise<{ port: number; cpuSeconds(): number; stop(): void }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { port, cpuSeconds: () => cpuSeconds(child.pid!), stop: () => child.kill() };
}

// The load generator, a separate node process: connects directly or through the tunnel, then
// either pushes MiB bytes and waits for the count, or ping-pongs one byte. Prints JSON.
const CLIENT = String.raw`
import { connect } from 'node:net';
const [mode, how, host, port, lease, sig, amount] = process.argv.slice(1);
const socket = connect({ host, port: Number(port), noDelay: true, allowHalfOpen: true });
const ready = new Promise((resolve) => {
  if (how === 'direct') return socket.once('connect', () => resolve(Buffer.alloc(0)));
  socket.once('connect', () => socket.write('POST /tunnel/' + lease + '/tcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: ' + sig + '\r\n\r\n'));
  let head = Buffer.alloc(0);
  const onData = (d) => {
    head = Buffer.concat([head, d]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    socket.off('data', onData);
    if (!head.subarray(0, 12).toString().startsWith('HTTP/1.1 200')) { console.error(head.toString()); process.exit(1); }
    resolve(head.subarray(end + 4));
  };
  socket.on('data', onData);
});
await ready;
if (mode === 'pull') {
  const total = Number(amount) * 1024 * 1024;
  let got = 0;
  const t0 = process.hrtime.bigint();
  const done = new Promise((resolve) => { socket.on('data', (d) => (got += d.length)); socket.on('end', resolve); });
  socket.end('PULL ' + total + '\n');
  await done;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (got !== total) { console.error('count mismatch', got); process.exit(1); }
  console.log(JSON.stringify({ mibPerS: total / 1048576 / s }));
} else if (mode === 'bulk') {
  const total = Number(amount) * 1024 * 1024;
  const chunk = Buffer.alloc(256 * 1024, 7);
  let answer = '';
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const done = new Promise((resolve) => { socket.on('data', (d) => (answer += d)); socket.on('end', resolve); });
  socket.write('BULK\n');
  let sent = 0;
  while (sent < total) {
    if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
    sent += chunk.length;
  }
  socket.end();
  await done;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  if (Number(answer) !== total) { console.error('count mismatch', answer); process.exit(1); }
  console.log(JSON.stringify({ mibPerS: total / 1048576 / s, cpuS: (cpu.user + cpu.system) / 1e6 }));
} else {
  const rtts = [];
  let waiting = null;
  socket.on('data', (d) => { const w = waiting; waiting = null; w && w(d); });
  const once = () => new Promise((r) => (waiting = r));
  socket.write('PING\n'); await once();
  for (let i = 0; i < Number(amount); i++) {
    const t0 = process.hrtime.bigint();
    const p = once();
    socket.write('x');
    await p;
    rtts.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  socket.destroy();
  rtts.sort((a, b) => a - b);
  console.log(JSON.stringify({ p50us: rtts[Math.floor(rtts.length / 2)], p99us: rtts[Math.floor(rtts.length * 0.99)] }));
}
process.exit(0);
`;

async function client(args: string[]): Promise<Record<string, number>> {
  const { stdout } = await run('taskset', ['-c', CLIENT_CPU, process.execPath, '--input-type=module', '-e', CLIENT, ...args], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as Record<string, number>;
}

async function timed(cmd: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('taskset', ['-c', CLIENT_CPU, cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  await run('taskset', ['-cp', SERVER_CPU, String(process.pid)]);
  const dir = mkdtempSync(join('/dev/shm', 'netnode-bench-tunnel-'));
  const access = newAccessKey();
  const dataDir = join(dir, 'data');
  const config = sshClientConfig(dir, access.writeTo(dir, 'access_key'), ['Ciphers aes128-gcm@openssh.com', 'Compression no']);
  const sshLease = randomLeaseHash();
  const vm =
    values.vm === 'docker'
      ? await startDockerLeaseVm(sshLease, access.pub, gatewayVmPublicKeyLine(dataDir))
      : await startStandInVm([access.line, gatewayVmPublicKeyLine(dataDir)]);
  const jump = await startStandInVm([access.line], ['AllowTcpForwarding yes']);
  const sink = await startSink();
  const sinkPort = sink.port;

  const leases = new LeaseTable();
  const rawLease = randomLeaseHash();
  leases.put(sshLease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: vm.host, port: vm.port });
  leases.put(rawLease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: '127.0.0.1', port: sinkPort });
  const logger = pino({ level: 'silent' });
  const network = new LocalNetwork('bench');
  const app = buildApiServer({
    routes: [tunnelRoute({ access: leases, remote: { open: (p, h, s) => network.openTunnel(p, h, s) }, clientKey, logger })],
    logger,
    adminToken: null,
    bind: '127.0.0.1',
    allowedHosts: [],
    corsOrigin: 'http://localhost:3000',
    rateLimit: false,
  });
  enableTunnelTakeover(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const apiPort = (app.server.address() as { port: number }).port;
  const gateway = new SshGateway({ dataDir, access: leases, clientKeyOfIp: keyOfIp, logger });
  const gwPort = await gateway.listen(0, '127.0.0.1');

  const src = join(dir, 'payload.bin');
  writeFileSync(src, randomBytes(MIB * 1024 * 1024));
  const dst = values.vm === 'docker' ? '/root/received.bin' : join(dir, 'received.bin');
  const rawSig = access.sign(rawLease);
  const sshSig = access.sign(sshLease);
  // The tunnel's HTTP handshake is done by a helper that then hands the socket to ssh and exits.
  const proxy = ['-o', 'ProxyUseFdpass=yes', '-o', `ProxyCommand=${PYTHON} ${FDPASS_HELPER} 127.0.0.1 ${apiPort} ${sshLease} ${sshSig}`];

  const r: Record<string, number[]> = {
    rawDirect: [], rawTunnel: [], p50Direct: [], p50Tunnel: [], p99Direct: [], p99Tunnel: [],
    scpDirect: [], scpTunnel: [], scpGatewayJ: [], scpOpensshJ: [],
    pullDirect: [], pullTunnel: [], cpuClientDirect: [], cpuSinkDirect: [], cpuSelfDirect: [], cpuClientTunnel: [], cpuRelayTunnel: [], cpuSinkTunnel: [],
  };
  const gib = MIB / 1024;
  // Bulk runs also record CPU seconds per GiB moved: of the client, the sink, and of this process,
  // which relays in the tunnel runs; the relay's cost is the difference to the direct runs, where
  // this process only spawns the client (forking it costs this process the same in both).
  const rawDirect = async () => {
    const sink0 = sink.cpuSeconds();
    const self0 = process.cpuUsage();
    const out = await client(['bulk', 'direct', '127.0.0.1', String(sinkPort), '', '', String(MIB)]);
    const self = process.cpuUsage(self0);
    r.rawDirect!.push(out.mibPerS!);
    r.cpuSelfDirect!.push((self.user + self.system) / 1e6 / gib);
    r.cpuClientDirect!.push(out.cpuS! / gib);
    r.cpuSinkDirect!.push((sink.cpuSeconds() - sink0) / gib);
  };
  const pullDirect = async () => {
    r.pullDirect!.push((await client(['pull', 'direct', '127.0.0.1', String(sinkPort), '', '', String(MIB)])).mibPerS!);
  };
  const pullTunnel = async () => {
    r.pullTunnel!.push((await client(['pull', 'tunnel', '127.0.0.1', String(apiPort), rawLease, rawSig, String(MIB)])).mibPerS!);
  };
  const rawTunnel = async () => {
    const sink0 = sink.cpuSeconds();
    const relay0 = process.cpuUsage();
    const out = await client(['bulk', 'tunnel', '127.0.0.1', String(apiPort), rawLease, rawSig, String(MIB)]);
    const relay = process.cpuUsage(relay0);
    r.rawTunnel!.push(out.mibPerS!);
    r.cpuClientTunnel!.push(out.cpuS! / gib);
    r.cpuRelayTunnel!.push((relay.user + relay.system) / 1e6 / gib);
    r.cpuSinkTunnel!.push((sink.cpuSeconds() - sink0) / gib);
  };
  const scpDirect = async () => r.scpDirect!.push(MIB / (await timed('scp', ['-q', '-F', config, '-P', String(vm.port), src, `root@127.0.0.1:${dst}`])));
  const scpTunnel = async () => r.scpTunnel!.push(MIB / (await timed('scp', ['-q', '-F', config, ...proxy, src, `root@vm:${dst}`])));
  const scpGatewayJ = async () =>
    r.scpGatewayJ!.push(MIB / (await timed('scp', ['-q', '-F', config, '-J', `${sshLease}@127.0.0.1:${gwPort}`, src, `root@vm:${dst}`])));
  const scpOpensshJ = async () =>
    r.scpOpensshJ!.push(
      MIB / (await timed('scp', ['-q', '-F', config, '-J', `root@127.0.0.1:${jump.port}`, '-P', String(vm.port), src, `root@127.0.0.1:${dst}`])),
    );
  /** Run `i` of a pair: which one goes first alternates, so load drifting within a pair favours neither. */
  const pairInTurn = async (i: number, a: () => Promise<unknown>, b: () => Promise<unknown>) => {
    for (const measure of i % 2 === 0 ? [a, b] : [b, a]) await measure();
  };
  for (let i = 0; i < RUNS; i++) {
    process.stderr.write(`run ${i + 1}/${RUNS}\n`);
    await pairInTurn(i, rawDirect, rawTunnel);
    await pairInTurn(i, pullDirect, pullTunnel);
    const ld = await client(['ping', 'direct', '127.0.0.1', String(sinkPort), '', '', String(PING_COUNT)]);
    const lt = await client(['ping', 'tunnel', '127.0.0.1', String(apiPort), rawLease, rawSig, String(PING_COUNT)]);
    r.p50Direct!.push(ld.p50us!);
    r.p50Tunnel!.push(lt.p50us!);
    r.p99Direct!.push(ld.p99us!);
    r.p99Tunnel!.push(lt.p99us!);
    await pairInTurn(i, scpDirect, scpTunnel);
    await pairInTurn(i, scpOpensshJ, scpGatewayJ);
  }

  const m = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, median(v)])) as Record<string, number>;
  // Runs are interleaved pairs; the median of per-pair ratios resists load drifting between runs.
  const pairRatio = (num: number[], den: number[]) => median(num.map((x, i) => x / den[i]!)).toFixed(3);
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' ');
  console.log(`tunnel/gateway benchmark — VM: ${values.vm}, ${RUNS} runs, ${MIB} MiB, medians (raw runs in brackets)`);
  console.log(`pinning: API server + gateway on CPU ${SERVER_CPU}; clients (node, ssh, scp) on CPU ${CLIENT_CPU}; VM side (sshd, sink) on CPU ${values.vm === 'docker' ? `${SERVER_CPU} (sink), container cpuset (VM)` : SERVER_CPU}`);
  console.log(`raw throughput  direct ${m.rawDirect!.toFixed(1)} MiB/s [${fmt(r.rawDirect!)}]  tunnel ${m.rawTunnel!.toFixed(1)} MiB/s [${fmt(r.rawTunnel!)}]`);
  console.log(`                ratio of medians ${(m.rawTunnel! / m.rawDirect!).toFixed(3)}, median of pair ratios ${pairRatio(r.rawTunnel!, r.rawDirect!)} (reported; the throughput target is scp's)`);
  const c = (x: number) => x.toFixed(2);
  const relayCpu = Math.max(0, m.cpuRelayTunnel! - m.cpuSelfDirect!);
  const cpuRatio = Math.max(m.cpuClientDirect!, m.cpuSinkDirect!) / Math.max(m.cpuClientTunnel!, m.cpuSinkTunnel! + relayCpu);
  console.log(
    `                CPU s/GiB: direct client ${c(m.cpuClientDirect!)} sink ${c(m.cpuSinkDirect!)}; tunnel client ${c(m.cpuClientTunnel!)} relay ${c(relayCpu)} sink ${c(m.cpuSinkTunnel!)} (ratio these costs allow ≈ ${c(cpuRatio)})`,
  );
  console.log(`raw VM → client direct ${m.pullDirect!.toFixed(1)} MiB/s [${fmt(r.pullDirect!)}]  tunnel ${m.pullTunnel!.toFixed(1)} MiB/s [${fmt(r.pullTunnel!)}]`);
  console.log(`                ratio of medians ${(m.pullTunnel! / m.pullDirect!).toFixed(3)}, median of pair ratios ${pairRatio(r.pullTunnel!, r.pullDirect!)}`);
  console.log(`round trip p50  direct ${m.p50Direct!.toFixed(1)} µs  tunnel ${m.p50Tunnel!.toFixed(1)} µs  added ${((m.p50Tunnel! - m.p50Direct!) / 1000).toFixed(3)} ms (target ≤ 0.2 ms); p99 ${m.p99Direct!.toFixed(1)} / ${m.p99Tunnel!.toFixed(1)} µs`);
  console.log(`scp             direct ${m.scpDirect!.toFixed(1)} MiB/s [${fmt(r.scpDirect!)}]  tunnel ${m.scpTunnel!.toFixed(1)} MiB/s [${fmt(r.scpTunnel!)}]`);
  console.log(`                ratio of medians ${(m.scpTunnel! / m.scpDirect!).toFixed(3)}, median of pair ratios ${pairRatio(r.scpTunnel!, r.scpDirect!)} (target ≥ 0.8)`);
  console.log(`scp -J          openssh ${m.scpOpensshJ!.toFixed(1)} MiB/s [${fmt(r.scpOpensshJ!)}]  gateway ${m.scpGatewayJ!.toFixed(1)} MiB/s [${fmt(r.scpGatewayJ!)}]`);
  console.log(`                ratio of medians ${(m.scpGatewayJ! / m.scpOpensshJ!).toFixed(3)}, median of pair ratios ${pairRatio(r.scpGatewayJ!, r.scpOpensshJ!)} (target ≥ 0.5)`);

  await gateway.close();
  await app.close();
  sink.stop();
  await vm.stop();
  await jump.stop();
  rmSync(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
