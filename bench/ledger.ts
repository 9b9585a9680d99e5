// Ledger engine throughput: 20,000 signed send/receive blocks through the ledger with the store on
// disk (WAL, synchronous=NORMAL) and the devnet representative (dev1) voting and finalizing every
// block, compared with the single-core node:crypto ed25519 verify rate measured in the same run.
//
// Modes (both run, in this order):
//   sequential — `ledger.submit` per block: inline verify, one commit per block;
//   pipelined  — signatures verified ahead in worker_threads (one batch in flight per worker)
//                while the main thread validates and commits each batch as one group commit
//                (`ledger.submitMany`); the ledger is told which signatures were already checked
//                (`ledger.preverify`).
// Run: npm run bench:ledger  [-- --blocks 20000 --workers 1 --batch 256 --mode both|sequential|pipelined]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { computeBlockHash } from '../ledger/codec/block.js';
import { hexToBytes } from '../ledger/codec/hex.js';
import { accountAddress } from '../ledger/crypto/address.js';
import { publicKeyFromSeed, signEd25519, verifyEd25519 } from '../ledger/crypto/ed25519.js';
import { solvePow } from '../ledger/crypto/pow.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS, devSeed } from '../ledger/genesis/devnet.js';
import { openLedger, type Ledger } from '../ledger/ledger.js';
import { openDatabase } from '../ledger/store/db.js';
import { emptyBlock, type Block } from '../ledger/types.js';
import { measureVerifyRate } from './verify.js';

const T0 = 1_800_000_000_000_000_000n;
const POW = 2n; // the devnet/test difficulty: PoW is still computed and checked for every block
const RECIPIENTS = 100;

interface VerifyJob {
  id: number;
  items: [pub: string, hash: string, sig: string][];
}

if (!isMainThread) {
  parentPort!.on('message', (job: VerifyJob) => {
    const ok = job.items.map(([pub, hash, sig]) => verifyEd25519(pub, hexToBytes(hash), sig));
    parentPort!.postMessage({ id: job.id, ok });
  });
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}

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

function seal(b: Block, k: Key): Block {
  b.hash = computeBlockHash(b, 'devnet');
  b.signature = signEd25519(k.seed, hexToBytes(b.hash));
  b.pow_nonce = solvePow(b.hash, POW);
  return b;
}

/** `count` blocks: dev1 sends round-robin to RECIPIENTS fresh accounts, each send followed by its receive. */
export function generate(count: number): { blocks: Block[]; signer: Map<string, string> } {
  const genesisHash = '9408143ef98180bc05e03d483ebb4876c55022a3e8fb171197070fa45ca2ab6c';
  const dev1 = key(devSeed(1));
  const recipients = Array.from({ length: RECIPIENTS }, (_, i) => {
    const seed = new Uint8Array(32);
    new DataView(seed.buffer).setUint32(0, i + 1000);
    return { ...key(seed), frontier: '0', balance: 0n };
  });
  const signer = new Map<string, string>([[dev1.address, dev1.pub]]);
  for (const r of recipients) signer.set(r.address, r.pub);
  const blocks: Block[] = [];
  let senderFrontier = genesisHash;
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
  return { blocks: blocks.slice(0, count), signer };
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

async function runPipelined(blocks: Block[], signer: Map<string, string>, workers: number, batch: number): Promise<number> {
  const { ledger, close } = freshLedger();
  const pool = Array.from({ length: workers }, () => new Worker(new URL(import.meta.url)));
  let nextId = 0;
  const waiting = new Map<number, (ok: boolean[]) => void>();
  for (const w of pool) w.on('message', (m: { id: number; ok: boolean[] }) => waiting.get(m.id)!(m.ok));
  const verify = (items: VerifyJob['items'], w: Worker): Promise<boolean[]> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      w.postMessage({ id, items } satisfies VerifyJob);
    });

  const start = performance.now();
  const batches: Block[][] = [];
  for (let i = 0; i < blocks.length; i += batch) batches.push(blocks.slice(i, i + batch));
  const itemsOf = (bs: Block[]) =>
    bs.map((b): VerifyJob['items'][number] => [signer.get(b.account)!, b.hash, b.signature]);
  // Keep one batch in flight per worker ahead of the batch being applied.
  const inFlight: Promise<boolean[]>[] = [];
  let sent = 0;
  const fill = () => {
    while (sent < batches.length && inFlight.length < workers) {
      inFlight.push(verify(itemsOf(batches[sent]!), pool[sent % workers]!));
      sent++;
    }
  };
  fill();
  for (const bs of batches) {
    const ok = await inFlight.shift()!;
    fill();
    ledger.preverify(
      bs
        .filter((_, i) => ok[i])
        .map((b) => ({ publicKey: signer.get(b.account)!, hash: b.hash, signature: b.signature })),
    );
    for (const r of ledger.submitMany(bs)) if (r instanceof Error) throw r;
  }
  const secs = (performance.now() - start) / 1000;
  await Promise.all(pool.map((w) => w.terminate()));
  close();
  return blocks.length / secs;
}

async function main(): Promise<void> {
  const count = arg('blocks', 20_000);
  const workers = arg('workers', 1);
  const batch = arg('batch', 256);
  process.stdout.write(`generating ${count} signed send/receive blocks… `);
  const { blocks, signer } = generate(count);
  console.log('done');

  const mode = process.argv.includes('--mode') ? process.argv[process.argv.indexOf('--mode') + 1] : 'both';
  const verifyRate = measureVerifyRate(2000).nodeCrypto;
  const sequential = mode === 'pipelined' ? NaN : runSequential(blocks);
  const pipelined = mode === 'sequential' ? NaN : await runPipelined(blocks, signer, workers, batch);
  const rssMb = process.resourceUsage().maxRSS / 1024;

  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  console.log(`ed25519 verify, single core (node:crypto): ${f(verifyRate)}/s`);
  if (!Number.isNaN(sequential)) {
    console.log(`ledger apply, sequential (inline verify):  ${f(sequential)} blocks/s  ratio ${(sequential / verifyRate).toFixed(2)}`);
  }
  if (!Number.isNaN(pipelined)) {
    const label = `pipelined (${workers} verify worker${workers === 1 ? '' : 's'}, batch ${batch})`;
    console.log(`ledger apply, ${label}: ${f(pipelined)} blocks/s  ratio ${(pipelined / verifyRate).toFixed(2)}`);
  }
  console.log(`peak RSS: ${rssMb.toFixed(1)} MiB`);
  const best = Math.max(...[sequential, pipelined].filter((x) => !Number.isNaN(x)));
  console.log(`target: ratio >= 0.70 — ${best / verifyRate >= 0.7 ? 'met' : 'NOT met'}`);
}
