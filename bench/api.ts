// API benchmark (npm run bench:api). The load generator is autocannon in a separate process
// (bench/api-load.ts), pinned to CPU 1; the server under test is pinned to CPU 0.
//
// 1. Sustained block intake: POST /blocks/send + /blocks/receive over one keep-alive connection
//    (pipelined, so the account chains stay in order) against the real `netnode node --dev`
//    daemon; blocks/s vs the single-core node:crypto ed25519 verify rate. Target ≥ 0.5.
// 2. GET /accounts/{a}/balance req/s vs a route returning a constant, both served by the same
//    node (same server, plugins and hooks; the constant route is appended to the route list).
//    Target ≥ 0.7.
// 3. Idle RSS of a dev daemon. Target ≤ 150 MB.
// Each figure is the median of 5 runs; ratios and raw figures are printed.

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { accountAddress } from '../ledger/crypto/address.js';
import { publicKeyFromSeed } from '../ledger/crypto/ed25519.js';
import { stringifyJson } from '../ledger/codec/json.js';
import { sendJson } from '../agent/api/http.js';
import { loadConfig } from '../agent/config.js';
import { startNode } from '../agent/node.js';
import { PROJECT_ROOT, startDevNode, type DevNode } from '../test/integration/harness.js';
import { devKey, finishBlock, receiveBlock, sendBlock, type DevKey } from '../test/integration/dev-blocks.js';
import { measureVerifyRate } from './verify.js';
import type { LoadJob, LoadResult } from './api-load.js';

const RUNS = 5;
const PAIRS_PER_RUN = 2500;
const READ_SECONDS = 5;
const READ_CONNECTIONS = 10;
const SERVER_CPU = '0';
const LOAD_CPU = '1';
const GENESIS_HASH = '9408143ef98180bc05e03d483ebb4876c55022a3e8fb171197070fa45ca2ab6c';
const LOAD_SCRIPT = join(PROJECT_ROOT, 'dist/bench/api-load.js');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

function pin(pid: number, cpu: string): boolean {
  return spawnSync('taskset', ['-pc', cpu, String(pid)], { stdio: 'ignore' }).status === 0;
}

/** Run one load job in its own process, pinned to the load CPU. */
function runLoad(job: LoadJob): Promise<LoadResult> {
  const file = join(mkdtempSync(join(tmpdir(), 'netnode-bench-')), 'job.json');
  writeFileSync(file, JSON.stringify(job));
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', LOAD_CPU, process.execPath, LOAD_SCRIPT, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      rmSync(file, { force: true });
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      resolve(JSON.parse(out) as LoadResult);
    });
  });
}

/** `pairs` sends from dev1 to fresh accounts, each followed by the recipient's opening receive. */
function transferPairs(dev1: DevKey, start: { frontier: string; balance: bigint }, pairs: number): { requests: LoadJob['requests']; frontier: string; balance: bigint } {
  const requests: NonNullable<LoadJob['requests']> = [];
  let { frontier, balance } = start;
  let ts = BigInt(Date.now()) * 1_000_000n;
  const headers = { 'content-type': 'application/json' };
  for (let i = 0; i < pairs; i++) {
    const seed = Uint8Array.from(randomBytes(32));
    const publicKey = publicKeyFromSeed(seed);
    const to: DevKey = { seed, publicKey, address: accountAddress(publicKey) };
    balance -= 1_000_000n;
    const send = finishBlock(sendBlock(dev1, { previous: frontier, balanceAfter: balance, to: to.address, amount: 1_000_000n, timestamp: (ts += 1000n) }), dev1);
    frontier = send.hash as string;
    const receive = finishBlock(receiveBlock(to, { previous: '0', balanceAfter: 1_000_000n, source: frontier, timestamp: (ts += 1000n) }), to);
    requests.push({ method: 'POST', path: '/blocks/send', headers, body: stringifyJson(send) });
    requests.push({ method: 'POST', path: '/blocks/receive', headers, body: stringifyJson(receive) });
  }
  return { requests, frontier, balance };
}

const PIPELINING = 16;

async function blockCount(node: DevNode): Promise<bigint> {
  const info = (await node.api.get('/node')).json as { block_count: bigint };
  return info.block_count;
}

async function blockIntake(): Promise<{ rates: number[]; rejected: number; rssAfterMb: number }> {
  const node = await startDevNode();
  try {
    pin(node.proc.pid!, SERVER_CPU);
    const dev1 = devKey(1);
    let state = { frontier: GENESIS_HASH, balance: 42_000_000_000_000n };
    const rates: number[] = [];
    let rejected = 0;
    for (let run = 0; run < RUNS; run++) {
      const batch = transferPairs(dev1, state, PAIRS_PER_RUN);
      state = { frontier: batch.frontier, balance: batch.balance };
      // autocannon may leave the last (pipelining − 1) requests of an `amount` unsent: pad with probes.
      const pads = Array.from({ length: PIPELINING - 1 }, () => ({ method: 'GET' as const, path: '/health' }));
      const requests = [...batch.requests!, ...pads];
      const before = await blockCount(node);
      const r = await runLoad({ url: `http://127.0.0.1:${node.apiPort}`, connections: 1, pipelining: PIPELINING, amount: requests.length, requests });
      const applied = Number((await blockCount(node)) - before);
      rejected += batch.requests!.length - applied;
      rates.push(applied / r.elapsedSeconds);
      console.log(`  run ${run + 1}: ${applied}/${batch.requests!.length} blocks applied in ${r.elapsedSeconds.toFixed(2)} s → ${fmt(applied / r.elapsedSeconds)} blocks/s`);
    }
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${node.proc.pid}/status`, 'utf8'));
    return { rates, rejected, rssAfterMb: rss ? Number(rss[1]) / 1024 : NaN };
  } finally {
    await node.stop();
  }
}

async function balanceVsConstant(): Promise<{ balance: number[]; constant: number[] }> {
  pin(process.pid, SERVER_CPU);
  const dataDir = mkdtempSync(join(tmpdir(), 'netnode-bench-node-'));
  const config = loadConfig(['--dev', '--data', dataDir, '--api-port', '0', '--metrics-addr', '']);
  const node = await startNode(
    config,
    { extraRoutes: [{ method: 'GET', path: '/bench/constant', description: 'Benchmark baseline: a constant', handler: (_req, reply) => sendJson(reply, 200, { ok: true }) }] },
    pino({ level: 'warn' }),
  );
  try {
    const url = `http://127.0.0.1:${node.apiAddress!.port}`;
    const dev1 = devKey(1).address;
    const balance: number[] = [];
    const constant: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const b = await runLoad({ url: `${url}/accounts/${dev1}/balance`, connections: READ_CONNECTIONS, pipelining: 1, duration: READ_SECONDS });
      const c = await runLoad({ url: `${url}/bench/constant`, connections: READ_CONNECTIONS, pipelining: 1, duration: READ_SECONDS });
      if (b.non2xx + c.non2xx > 0) throw new Error(`non-2xx answers during the read benchmark: ${b.non2xx} + ${c.non2xx}`);
      balance.push(b.perSecond);
      constant.push(c.perSecond);
      console.log(`  run ${run + 1}: balance ${fmt(b.perSecond)} req/s, constant ${fmt(c.perSecond)} req/s`);
    }
    return { balance, constant };
  } finally {
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function idleRss(): Promise<number[]> {
  const node = await startDevNode();
  try {
    // Let start-up work (the dev certificate benchmark) finish and the heap settle.
    await new Promise((r) => setTimeout(r, 8000));
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${node.proc.pid}/status`, 'utf8'));
      samples.push(Number(m![1]) / 1024);
      await new Promise((r) => setTimeout(r, 1000));
    }
    return samples;
  } finally {
    await node.stop();
  }
}

async function main(): Promise<void> {
  console.log(`API benchmark — server pinned to CPU ${SERVER_CPU}, autocannon (separate process) pinned to CPU ${LOAD_CPU}; median of ${RUNS} runs`);
  const verify = measureVerifyRate(2000).nodeCrypto;
  console.log(`single-core node:crypto ed25519 verify rate: ${fmt(verify)}/s`);

  console.log(`\n1. block intake: ${PAIRS_PER_RUN} send + ${PAIRS_PER_RUN} receive per run, 1 keep-alive connection, pipelining ${PIPELINING}`);
  const intake = await blockIntake();
  const blocksPerSecond = median(intake.rates);
  console.log(`   median ${fmt(blocksPerSecond)} blocks/s; rejected ${intake.rejected}; ratio to verify rate ${(blocksPerSecond / verify).toFixed(3)} (target ≥ 0.5)`);
  console.log(`   daemon RSS after the intake runs: ${intake.rssAfterMb.toFixed(1)} MB`);

  console.log(`\n2. GET /accounts/{dev1}/balance vs constant route, ${READ_CONNECTIONS} connections, ${READ_SECONDS} s each`);
  const reads = await balanceVsConstant();
  const b = median(reads.balance);
  const c = median(reads.constant);
  console.log(`   median balance ${fmt(b)} req/s, constant ${fmt(c)} req/s; ratio ${(b / c).toFixed(3)} (target ≥ 0.7)`);

  console.log('\n3. idle RSS of a dev daemon');
  const rss = await idleRss();
  console.log(`   samples ${rss.map((x) => x.toFixed(1)).join(', ')} MB; median ${median(rss).toFixed(1)} MB (target ≤ 150 MB)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
