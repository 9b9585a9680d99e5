// Shared fixtures of the state chain tests: a devnet chain on a real SQLite file and signed blocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach } from 'vitest';
import { parseJson, RawJson, stringifyJson } from '../../ledger/codec/json.js';
import { hexToBytes, ZERO_HASH } from '../../ledger/codec/hex.js';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import { DEVNET_STATECHAIN_GENESIS, devSeed } from '../../ledger/genesis/devnet.js';
import type { StatechainBlock } from '../../ledger/service.js';
import { emitStatechainBlock, isEncodable, statechainHash } from '../../ledger/statechain/block.js';
import { Statechain } from '../../ledger/statechain/statechain.js';

export const T0 = 1_800_000_000_000_000_000n;
export const SECOND = 1_000_000_000n;
export const DAY = 86_400n * SECOND;

export const dev = (n: number): string => publicKeyFromSeed(devSeed(n));

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

export function tempDbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'netnode-statechain-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}

export function openDb(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  return db;
}

export interface TestChain {
  sc: Statechain;
  db: Database.Database;
  path: string;
  clock: { now: bigint };
}

export function openChain(path = tempDbPath(), genesis = DEVNET_STATECHAIN_GENESIS): TestChain {
  const db = openDb(path);
  const clock = { now: T0 };
  const sc = new Statechain(db, genesis, { now: () => clock.now });
  return { sc, db, path, clock };
}

export interface OpSpec {
  action: string;
  key: string;
  /** Raw value text, used verbatim. */
  value?: string;
}

export function raw(text: string): RawJson {
  let value = null;
  try {
    value = parseJson(text);
  } catch {
    // deliberately invalid value text for the op rule tests
  }
  return new RawJson(text, value);
}

/** A block on top of `prev`, hashed and signed by the dev keys `signers`. */
export function buildBlock(
  prev: { index: bigint; hash: string },
  ops: OpSpec[],
  signers: number[],
  timestamp: bigint,
): StatechainBlock {
  const block: StatechainBlock = {
    index: prev.index + 1n,
    prev_hash: prev.hash,
    ops: ops.map((op) => ({
      action: op.action as 'set' | 'delete',
      key: op.key,
      ...(op.value !== undefined ? { value: raw(op.value) } : {}),
    })),
    signatures: [],
    hash: ZERO_HASH,
    timestamp,
  };
  if (isEncodable(block)) block.hash = statechainHash(block);
  block.signatures = signers.map((n) => sign(block.hash, n));
  return block;
}

export function sign(hash: string, n: number): { public_key: string; signature: string } {
  return { public_key: dev(n), signature: signEd25519(devSeed(n), hexToBytes(hash)) };
}

/** Recompute hash and signatures after a test edited a block. */
export function reseal(block: StatechainBlock, signers: number[]): StatechainBlock {
  block.hash = statechainHash(block);
  block.signatures = signers.map((n) => sign(block.hash, n));
  return block;
}

/** A DAO block (dev3 + dev4) on the chain's tip at the chain's clock. */
export function daoBlock(t: TestChain, ops: OpSpec[], signers = [3, 4], timestamp = t.clock.now): StatechainBlock {
  return buildBlock(t.sc.tip(), ops, signers, timestamp);
}

/** An oracle block (dev1) on the chain's tip at the chain's clock. */
export function oracleBlock(t: TestChain, ops: OpSpec[], signers = [1], timestamp = t.clock.now): StatechainBlock {
  return buildBlock(t.sc.tip(), ops, signers, timestamp);
}

/** Round trip through the wire form, as the HTTP layer would receive it. */
export function viaText(block: StatechainBlock): StatechainBlock {
  return Statechain.parseBlock(emitStatechainBlock(block));
}

/** Compact text of a valid phase-1 epoch `n` on devnet, with fields replaced or removed. */
export function epochValue(n: bigint, start: bigint, overrides: Record<string, unknown> = {}): string {
  const v: Record<string, unknown> = {
    epoch: n,
    start_ns: start,
    end_ns: start + DAY,
    twap_milli_usd: 250n,
    twav_milli_usd: 1000n,
    r_volume: 1800n,
    r_price_floor: 2000n,
    r_effective: 2000n,
    r_source: 'price_floor',
    phase: 1n,
    payout_cap: 1200n,
    ...overrides,
  };
  return stringifyJson(v);
}
