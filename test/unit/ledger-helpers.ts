// Shared fixtures of the ledger engine tests: a devnet ledger on a real SQLite file in a temp dir,
// a settable clock, and a block builder that fills, hashes, signs (dev keys) and solves PoW.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { parseJson, RawJson, type JsonValue } from '../../ledger/codec/json.js';
import { emitStatechainBlock, parseStatechainBlock, statechainHash } from '../../ledger/statechain/block.js';
import { computeBlockHash, parseBlockJson } from '../../ledger/codec/block.js';
import { hexToBytes } from '../../ledger/codec/hex.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import { signAttestation } from '../../ledger/crypto/attestation.js';
import { solvePow } from '../../ledger/crypto/pow.js';
import { multisigAddress } from '../../ledger/crypto/multisig.js';
import { parseCertificateJson, certificateHash } from '../../ledger/certificates/codec.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS, devSeed } from '../../ledger/genesis/devnet.js';
import { openDatabase, type Database } from '../../ledger/store/db.js';
import { openLedger, type Ledger, type LedgerOptions } from '../../ledger/ledger.js';
import { LedgerError } from '../../ledger/errors.js';
import { emptyBlock, type Block, type BlockType, type Certificate, type Keyset } from '../../ledger/types.js';

export const T0 = 1_800_000_000_000_000_000n;
export const SECOND = 1_000_000_000n;
export const TEST_POW = 2n;
export const DEFAULT_POW = 0xfffff80000000000n;

export type Obj = { [key: string]: JsonValue };
export const vectors = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as Obj;

export interface DevKey {
  n: number;
  seed: Uint8Array;
  pub: string;
  address: string;
}

export function dev(n: number): DevKey {
  const seed = devSeed(n);
  const pub = publicKeyFromSeed(seed);
  return { n, seed, pub, address: accountAddress(pub) };
}

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'netnode-ledger-'));
  dirs.push(dir);
  return dir;
}

export class Clock {
  constructor(public ns: bigint = T0) {}
  now = (): bigint => this.ns;
}

export interface TestLedger {
  ledger: Ledger;
  db: Database;
  path: string;
  clock: Clock;
  /** Close and reopen on the same file (same options). */
  reopen(overrides?: Partial<LedgerOptions>): TestLedger;
  close(): void;
}

export function openTestLedger(
  overrides: Partial<LedgerOptions> = {},
  path = join(tempDir(), 'node.db'),
  clock = new Clock(),
): TestLedger {
  const db = openDatabase(path);
  const ledger = openLedger({
    db,
    genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS },
    powDifficulty: TEST_POW,
    now: clock.now,
    certificateIterations: 1_000_000n,
    ...overrides,
  });
  const t: TestLedger = {
    ledger,
    db,
    path,
    clock,
    reopen(o = {}) {
      t.close();
      return openTestLedger({ ...overrides, ...o }, path, clock);
    },
    close() {
      ledger.close();
      if (db.open) db.close();
    },
  };
  return t;
}

/** The devnet certificate of dev1 from the vectors (issued 1799996400 s, expires 7 days later). */
export function devnetCertificate(): Certificate {
  const v = (vectors.certificate_vectors as Obj[]).find((c) => c.network_id === 'devnet')!;
  return parseCertificateJson(v.certificate as JsonValue);
}

/** A fresh certificate for `provider` (dev key) with the given issue time and multiplier. */
export function makeCertificate(provider: DevKey, issuedAt: bigint, multiplier = 1000n, networkId = 'devnet'): Certificate {
  const base = devnetCertificate();
  const c: Omit<Certificate, 'hash' | 'signature'> = {
    ...base,
    provider: provider.address,
    provider_pub_key: provider.pub,
    start_median: issuedAt,
    end_median: issuedAt + 2_500_000_000n,
    issued_at: issuedAt,
    expires_at: issuedAt + 604_800_000_000_000n,
    price_multiplier_milli: multiplier,
  };
  const hash = certificateHash(c, networkId);
  return { ...c, hash, signature: signEd25519(provider.seed, hexToBytes(hash)) };
}

export interface Signer {
  single?: DevKey;
  multisig?: DevKey[];
}

/**
 * Fill, hash, sign and solve PoW. `signer` is a dev key number (single-key) or a list of dev key
 * numbers (multisig signatures). `pub_key` is declared when a single-key block opens a chain.
 */
export function build(
  type: BlockType,
  fields: Partial<Block>,
  signer: number | number[],
  opts: { networkId?: string; difficulty?: bigint; declare?: boolean } = {},
): Block {
  const b: Block = { ...emptyBlock(type), ...fields };
  const multisig = Array.isArray(signer);
  if (multisig) b.signatures = [];
  if (!multisig && (opts.declare ?? b.previous === '0')) b.pub_key = dev(signer).pub;
  b.hash = computeBlockHash(b, opts.networkId ?? 'devnet');
  if (multisig) {
    b.signatures = signer.map((n) => ({ public_key: dev(n).pub, signature: signEd25519(devSeed(n), hexToBytes(b.hash)) }));
  } else {
    b.signature = signEd25519(devSeed(signer), hexToBytes(b.hash));
  }
  b.pow_nonce = solvePow(b.hash, opts.difficulty ?? TEST_POW);
  return b;
}

/** An attestation by dev1 (the devnet timekeeper) over `lease` at `t`. */
export function attest(lease: string, t: bigint, n = 1) {
  return signAttestation(devSeed(n), lease, t);
}

export function keysetOf(ns: number[], threshold: number): Keyset {
  return { keys: ns.map((n) => dev(n).pub), threshold };
}

export function multisigOf(ns: number[], threshold: number): string {
  return multisigAddress(keysetOf(ns, threshold));
}

/** Parse a block vector's JSON. */
export function vectorBlock(name: string, networkId = 'devnet'): Block {
  const v = (vectors.block_vectors as Obj[]).find((x) => x.name === name && x.network_id === networkId)!;
  return parseBlockJson(v.block as JsonValue);
}

/** Expect `fn` to throw a LedgerError with exactly this message, and its retryability. */
export function expectReject(fn: () => unknown, message: string, retryable = false, path: 'live' | 'sync' = 'live'): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected rejection "${message}"`).toBeInstanceOf(LedgerError);
  expect((caught as LedgerError).message).toBe(message);
  expect((caught as LedgerError).retryable(path)).toBe(retryable);
}

/**
 * A small scenario driver on top of a TestLedger: tracks frontiers so tests write blocks by intent.
 */
export class Chains {
  constructor(readonly t: TestLedger) {}

  get ledger(): Ledger {
    return this.t.ledger;
  }

  frontier(k: DevKey | string): string {
    const address = typeof k === 'string' ? k : k.address;
    return this.ledger.frontier(address) ?? '0';
  }

  balance(k: DevKey | string, asset: string): bigint {
    return this.ledger.runningBalance(typeof k === 'string' ? k : k.address, asset);
  }

  /** Build a block on the account's frontier at the clock's time; fields override. */
  next(type: BlockType, who: DevKey, fields: Partial<Block>, signer: number | number[] = who.n): Block {
    return build(type, { account: who.address, previous: this.frontier(who), timestamp: this.t.clock.ns, ...fields }, signer);
  }

  submit(b: Block) {
    return this.ledger.submit(b);
  }

  /** XE sends in a row on `from`'s frontier, one per transfer, a nanosecond apart: built, not submitted. */
  sendsAhead(from: DevKey, transfers: { to: string; amount: bigint }[]): Block[] {
    let previous = this.frontier(from);
    let balance = this.balance(from, 'XE');
    return transfers.map(({ to, amount }, i) => {
      balance -= amount;
      const b = build('send', { account: from.address, previous, timestamp: this.t.clock.ns + BigInt(i), asset: 'XE', destination: to, amount, balance }, from.n);
      previous = b.hash;
      return b;
    });
  }

  /** `who`'s opening receive of `send`, a nanosecond after it: built, not submitted. */
  openingReceive(who: DevKey, send: Block, representative = ''): Block {
    return build(
      'receive',
      { account: who.address, previous: '0', timestamp: send.timestamp + 1n, asset: send.asset, source: send.hash, balance: send.amount, representative },
      who.n,
    );
  }

  send(from: DevKey, to: DevKey | string, amount: bigint, asset = 'XE'): Block {
    const b = this.next('send', from, {
      asset,
      destination: typeof to === 'string' ? to : to.address,
      amount,
      balance: this.balance(from, asset) - amount,
    });
    this.submit(b);
    return b;
  }

  receive(who: DevKey, send: Block, representative = ''): Block {
    const b = this.next('receive', who, {
      asset: send.asset,
      source: send.hash,
      balance: this.balance(who, send.asset) + send.amount,
      representative,
    });
    this.submit(b);
    return b;
  }

  mint(amount: bigint, minter = dev(2)): Block {
    const b = this.next('mint', minter, { asset: 'XUSD', amount, balance: this.balance(minter, 'XUSD') + amount });
    this.submit(b);
    return b;
  }

  /** Give `who` XE and XUSD (opening its chain). */
  fund(who: DevKey, xe: bigint, xusd: bigint): void {
    if (xe > 0n) this.receive(who, this.send(dev(1), who, xe), dev(1).address);
    if (xusd > 0n) {
      const minter = dev(2);
      if (this.balance(minter, 'XUSD') < xusd) this.mint(xusd);
      this.receive(who, this.send(minter, who, xusd, 'XUSD'));
    }
  }
}

/**
 * The devnet state chain genesis with ops removed or values replaced (`null` removes the key),
 * re-hashed: for tests of governance the devnet does not have (no minter, no timekeepers, no epoch).
 */
export function statechainGenesisVariant(changes: Record<string, string | null>): string {
  const g = parseStatechainBlock(DEVNET_STATECHAIN_GENESIS);
  g.ops = g.ops
    .filter((op) => changes[op.key] !== null)
    .map((op) => (op.key in changes ? { ...op, value: new RawJson(changes[op.key]!, parseJson(changes[op.key]!)) } : op));
  g.hash = statechainHash(g);
  return emitStatechainBlock(g);
}

/** Lease block fields for dev6 → dev1 on the devnet certificate: 1 vCPU, 1 GiB, 10 GiB for `duration` s. */
export function leaseFields(duration = 60n): Partial<Block> {
  return {
    asset: 'XUSD',
    destination: dev(1).address,
    vcpus: 1n,
    memory_mb: 1024n,
    disk_gb: 10n,
    duration,
    certificate_hash: devnetCertificate().hash,
  };
}
