// Ledger engine throughput: 20,000 signed send/receive blocks through the ledger with the store on
// disk (WAL, synchronous=NORMAL) and the devnet representative (dev1) voting and finalizing every
// block, compared with the single-core node:crypto ed25519 verify rate measured in the same run.
//
// Modes (both run, in this order, each --runs times on a fresh ledger; medians reported):
//   sequential — `ledger.submit` per block: inline verify, one commit per block;
//   pipelined  — the daemon's intake path (agent/intake): blocks go through BlockIntake, which checks
//                signatures ahead on a VerifyPool worker thread while the main thread validates
//                and applies each batch as one group commit (`ledger.submitMany`).
// The verify rate is measured before each run, so every ratio compares figures taken side by side.
// Run: npm run bench:ledger  [-- --blocks 20000 --runs 3 --workers 1 --mode both|sequential|pipelined]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { accountAddress } from '../ledger/crypto/address.js';
import { finishBlock } from '../ledger/crypto/block-signer.js';
import { publicKeyFromSeed } from '../ledger/crypto/ed25519.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_LEDGER_GENESIS_HASH, DEVNET_STATECHAIN_GENESIS, devSeed } from '../ledger/genesis/devnet.js';
import { openLedger, type Ledger } from '../ledger/ledger.js';
import type { SubmitResult } from '../ledger/service.js';
import { openDatabase } from '../ledger/store/db.js';
import { emptyBlock, type Block } from '../ledger/types.js';
import { BlockIntake, MAX_QUEUED } from '../agent/intake/block-intake.js';
import { VerifyPool } from '../agent/intake/verify-pool.js';
import { nodeCryptoVerifyRate } from './verify.js';
import { median } from './stats.js';

const T0 = 1_800_000_000_000_000_000n;
const POW = 2n; // the devnet/test difficulty: PoW is still computed and checked for every block
const RECIPIENTS = 100;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

interface Key {
  seed: Uint8Array;
  pub: string;
  address: string;
}

function key(seed: Uint8Array): Key {
  const pub = publicKeyFromSeed(seed);
  return { seed, pub, address: accountAddress(pub) };
}

const seal = (b: Block, k: Key): Block => finishBlock(b, { networkId: 'devnet', difficulty: POW, seed: k.seed });

/** `count` blocks: dev1 sends round-robin to RECIPIENTS fresh accounts, each send followed by its receive. */
export function generate(count: number): Block[] {
  const dev1 = key(devSeed(1));
  const recipients = Array.from({ length: RECIPIENTS }, (_, i) => {
    const seed = new Uint8Array(32);
    new DataView(seed.buffer).setUint32(0, i + 1000);
    return { ...key(seed), frontier: '0', balance: 0n };
  });
  const blocks: Block[] = [];
  let senderFrontier = DEVNET_LEDGER_GENESIS_HASH;
  let senderBalance = 42_000_000_000_000n;
  let ts = T0;
  for (let i = 0; blocks.length < count; i++) {
    const r = recipients[i % RECIPIENTS]!;
    const amount = 1_000_000n + BigInt(i);
    senderBalance -= amount;
    const send = seal(
      {
        ...emptyBlock('send'),
        account: dev1.address,
        previous: senderFrontier,
        balance: senderBalance,
        timestamp: ts++,
        asset: 'XE',
        destination: r.address,
        amount,
      },
      dev1,
    );
    senderFrontier = send.hash;
    r.balance += amount;
    const receive = seal(
      {
        ...emptyBlock('receive'),
        account: r.address,
        previous: r.frontier,
        balance: r.balance,
        timestamp: ts++,
        asset: 'XE',
        source: send.hash,
        representative: r.frontier === '0' ? dev1.address : '',
        pub_key: r.frontier === '0' ? r.pub : '',
      },
      r,
    );
    r.frontier = receive.hash;
    blocks.push(send, receive);
  }
  return blocks.slice(0, count);
}

export function freshLedger(): { ledger: Ledger; dir: string; close: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'netnode-bench-ledger-'));
  const db = openDatabase(join(dir, 'node.db'));
  const ledger = openLedger({
    db,
    genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS },
    powDifficulty: POW,
    now: () => T0,
    certificateIterations: 1_000_000n,
    identitySeed: devSeed(1),
    stabilityWindowNs: 0n,
  });
  return {
    ledger,
    dir,
    close: () => {
      ledger.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function runSequential(blocks: Block[]): number {
  const { ledger, close } = freshLedger();
  const start = performance.now();
  for (const b of blocks) ledger.submit(b);
  const secs = (performance.now() - start) / 1000;
  close();
  return blocks.length / secs;
}

async function runPipelined(blocks: Block[], workers: number): Promise<number> {
  const { ledger, close } = freshLedger();
  const pool = new VerifyPool(workers);
  const intake = new BlockIntake(ledger, pool);
  const start = performance.now();
  // As many submissions in flight as half the intake's queue bound: the queue never runs dry.
  const window = MAX_QUEUED / 2;
  const submitted: Promise<SubmitResult>[] = [];
  const results: SubmitResult[] = [];
  for (const b of blocks) {
    if (submitted.length >= window) results.push(await submitted[submitted.length - window]!);
    submitted.push(intake.submit(b));
  }
  results.push(...(await Promise.all(submitted.slice(results.length))));
  const secs = (performance.now() - start) / 1000;
  await pool.close();
  close();
  if (results.some((r) => r.status !== 'applied')) throw new Error('a benchmark block was not applied');
  return blocks.length / secs;
}

async function main(): Promise<void> {
  const count = arg('blocks', 20_000);
  const runs = arg('runs', 3);
  const workers = arg('workers', 1);
  const mode = process.argv.includes('--mode') ? process.argv[process.argv.indexOf('--mode') + 1] : 'both';
  process.stdout.write(`generating ${count} signed send/receive blocks… `);
  const blocks = generate(count);
  console.log('done');

  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  const modes: [string, () => Promise<number>][] = [];
  if (mode !== 'pipelined') modes.push(['sequential (inline verify, one commit per block)', async () => runSequential(blocks)]);
  if (mode !== 'sequential') {
    modes.push([`pipelined (BlockIntake, ${workers} verify worker${workers === 1 ? '' : 's'}, group commit)`, () => runPipelined(blocks, workers)]);
  }
  let best = 0;
  for (const [label, run] of modes) {
    const ratios: number[] = [];
    for (let i = 0; i < runs; i++) {
      const verifyRate = nodeCryptoVerifyRate(1000);
      const rate = await run();
      ratios.push(rate / verifyRate);
      console.log(`  ${label}, run ${i + 1}: ${f(rate)} blocks/s vs ${f(verifyRate)} verify/s → ratio ${(rate / verifyRate).toFixed(2)}`);
    }
    console.log(`ledger apply, ${label}: median ratio ${median(ratios).toFixed(2)}`);
    best = Math.max(best, median(ratios));
  }
  console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MiB`);
  console.log(`target: ratio >= 0.70 — ${best >= 0.7 ? 'met' : 'NOT met'}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
