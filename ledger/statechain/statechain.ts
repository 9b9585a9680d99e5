// The governance state chain (statechain.md): validation of every appended block (§4), the KV,
// the as-of governance views the ledger reads (§11) and boot-time replay.
import type { Database } from 'better-sqlite3';
import { LedgerError, invalid } from '../errors.js';
import { isLowerHex, ZERO_HASH } from '../codec/hex.js';
import { formatDuration } from '../codec/duration.js';
import { isJsonObject, parseJson, RawJson, type JsonValue } from '../codec/json.js';
import type { KeyPage, StatechainBlock, StatechainService } from '../service.js';
import type { IntakePath, Keyset } from '../types.js';
import {
  emitStatechainBlock,
  isEncodable,
  parseStatechainBlock,
  statechainBlockFromJson,
  statechainHash,
} from './block.js';
import { checkAuthority, checkThreshold } from './authority.js';
import { GovernanceHistory, type GovernanceView } from './governance.js';
import { BLOCK_MAX_BYTES, checkOp, checkOps, oraclePolicy, readKeyset, type KvReader } from './rules.js';
import { StatechainStore } from './store.js';

export type { Epoch, GovernanceView } from './governance.js';
export { RAW_OP_VALUE } from './block.js';

/** Live-path window around the node's clock (§4 step 6). */
export const LIVE_WINDOW_NS = 3_600_000_000_000n;

export type RepresentativesPolicy = { mode: 'open' } | { mode: 'allowlist'; addresses: string[] };

export interface StatechainOptions {
  /** The node's clock, Unix ns (live timestamp window). */
  now: () => bigint;
}

/** The stored chain does not verify, or belongs to another genesis: the node must not start. */
export class StatechainIntegrityError extends Error {
  constructor(message: string) {
    super(`statechain store: ${message}`);
    this.name = 'StatechainIntegrityError';
  }
}

export class Statechain implements StatechainService {
  private readonly store: StatechainStore;
  private readonly kvMap = new Map<string, string>();
  private readonly kvReader: KvReader = { get: (key) => this.kvMap.get(key) ?? null };
  private readonly governance = new GovernanceHistory();
  private readonly listeners = new Set<(b: StatechainBlock) => void>();
  private readonly now: () => bigint;
  private tipBlock!: StatechainBlock;
  private networkIdCache: string | undefined;
  readonly genesisHash: string;

  /** Parse a block from JSON text; throws BodyShapeError on wrong JSON types. */
  static parseBlock(text: string): StatechainBlock {
    return parseStatechainBlock(text);
  }

  /** Build a block from a value parsed with the raw option on `ops[i].value`. */
  static parseBlockValue(json: JsonValue): StatechainBlock {
    return statechainBlockFromJson(json);
  }

  constructor(db: Database, genesisText: string, opts: StatechainOptions) {
    this.now = opts.now;
    const genesis = parseStatechainBlock(genesisText);
    checkGenesis(genesis);
    this.genesisHash = genesis.hash;
    this.store = new StatechainStore(db);
    if (this.store.count() === 0) {
      this.store.append(genesis);
      this.applyInMemory(genesis);
    } else {
      this.replay();
    }
  }

  /** `sys.network_id`: set by the genesis, never changed (§6). */
  get networkId(): string {
    return (this.networkIdCache ??= parseJson(this.kvMap.get('sys.network_id')!) as string);
  }

  tip(): StatechainBlock {
    return this.tipBlock;
  }

  blockAt(index: bigint): StatechainBlock | null {
    return this.store.blockAt(index);
  }

  blocks(start: bigint, limit: number): StatechainBlock[] {
    return this.store.blocks(start, limit);
  }

  count(): number {
    return Number(this.tipBlock.index) + 1;
  }

  get(key: string): string | null {
    return this.kvMap.get(key) ?? null;
  }

  kv(prefix: string, after: string | undefined, limit: number): KeyPage<RawJson> {
    const rows = this.store.scan(prefix, after, limit + 1);
    const page = rows.slice(0, limit);
    const entries = page.map((r): [string, RawJson] => [r.key, new RawJson(r.value, parseJson(r.value))]);
    return rows.length > limit && page.length > 0 ? { entries, nextAfter: page[page.length - 1]!.key } : { entries };
  }

  daoKeyset(): Keyset | null {
    const text = this.kvMap.get('sys.dao_keyset');
    return text === undefined ? null : readKeyset(text);
  }

  /** Governance as of a ledger block with timestamp T (§11). */
  asOf(timestamp: bigint): GovernanceView {
    return this.governance.asOf(timestamp);
  }

  /** `sys.representatives` as it stands now (ledger.md §16): absent or unreadable reads as open. */
  representativesPolicy(): RepresentativesPolicy {
    const text = this.kvMap.get('sys.representatives');
    if (text === undefined) return { mode: 'open' };
    const v = parseJson(text);
    if (isJsonObject(v) && v.mode === 'allowlist' && Array.isArray(v.addresses)) {
      const addresses = v.addresses.filter((a): a is string => typeof a === 'string');
      return { mode: 'allowlist', addresses };
    }
    return { mode: 'open' };
  }

  /**
   * Called after each applied block (never for a duplicate), after the commit. Listeners must not
   * throw: the block is applied whatever they do. Returns an unsubscribe function.
   */
  onApplied(listener: (b: StatechainBlock) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  submit(block: StatechainBlock, path: IntakePath): { status: 'applied' | 'duplicate'; block: StatechainBlock } {
    checkHexShape(block);
    checkHash(block);
    const tip = this.tipBlock;
    if (block.index <= tip.index) {
      const held = this.store.blockAt(block.index)!;
      if (held.hash === block.hash) return { status: 'duplicate', block: held };
      throw invalid(`fork detected at index ${block.index}: existing ${held.hash}, incoming ${block.hash}`);
    }
    if (block.index !== tip.index + 1n) {
      throw new LedgerError('frontier', `expected index ${tip.index + 1n}, got ${block.index}: statechain gap`);
    }
    if (block.prev_hash !== tip.hash) {
      throw new LedgerError('frontier', `prev_hash mismatch: expected ${tip.hash}, got ${block.prev_hash}`);
    }
    if (block.timestamp < tip.timestamp) throw invalid(`timestamp ${block.timestamp} is before previous ${tip.timestamp}`);
    if (path === 'live') {
      const delta = block.timestamp - this.now();
      if (delta > LIVE_WINDOW_NS || delta < -LIVE_WINDOW_NS) {
        throw invalid(`statechain block timestamp out of range: delta=${formatDuration(delta)}`);
      }
    }
    if (block.ops.length === 0) throw invalid('block has no ops');
    const size = Buffer.byteLength(emitStatechainBlock(block), 'utf8');
    if (size > BLOCK_MAX_BYTES) throw invalid(`block size ${size} exceeds limit ${BLOCK_MAX_BYTES}`);
    checkOps(block, this.kvReader, { index: tip.index, timestamp: tip.timestamp });
    checkAuthority(block, this.kvReader);

    try {
      this.store.append(block);
    } catch (e) {
      if (isBusy(e)) throw new LedgerError('storage', `storage conflict: ${(e as Error).message}`);
      throw e;
    }
    this.applyInMemory(block);
    for (const listener of this.listeners) listener(block);
    return { status: 'applied', block };
  }

  private applyInMemory(block: StatechainBlock): void {
    for (const op of block.ops) {
      if (op.action === 'set' && op.value) this.kvMap.set(op.key, op.value.text);
      else this.kvMap.delete(op.key);
    }
    this.governance.record(block);
    this.tipBlock = block;
  }

  /** Boot check (§4): contiguity, hashes, linkage, timestamps and signatures of every stored block. */
  private replay(): void {
    let expected = 0n;
    let prev: StatechainBlock | null = null;
    for (const { idx, body } of this.store.allBodies()) {
      let block: StatechainBlock;
      try {
        block = parseStatechainBlock(body);
      } catch {
        throw new StatechainIntegrityError(`block ${idx} does not parse`);
      }
      if (idx !== expected || block.index !== expected) {
        throw new StatechainIntegrityError(`expected block ${expected}, found ${idx}`);
      }
      if (!isEncodable(block) || !isLowerHex(block.prev_hash, 64) || statechainHash(block) !== block.hash) {
        throw new StatechainIntegrityError(`block ${idx} hash does not verify`);
      }
      if (prev === null) {
        if (block.hash !== this.genesisHash) {
          throw new StatechainIntegrityError(`holds genesis ${block.hash}, expected ${this.genesisHash}`);
        }
      } else {
        if (block.prev_hash !== prev.hash) throw new StatechainIntegrityError(`block ${idx} does not link to block ${prev.index}`);
        if (block.timestamp < prev.timestamp) throw new StatechainIntegrityError(`block ${idx} timestamp decreases`);
        try {
          checkSigners(block, this.kvReader);
        } catch (e) {
          throw new StatechainIntegrityError(`block ${idx} signatures: ${(e as Error).message}`);
        }
      }
      this.applyInMemory(block);
      prev = block;
      expected++;
    }
    this.checkStoredState();
  }

  /** The KV and history tables must be exactly what the verified blocks produce. */
  private checkStoredState(): void {
    const stored = this.store.allKv();
    if (stored.size !== this.kvMap.size || [...stored].some(([k, v]) => this.kvMap.get(k) !== v)) {
      throw new StatechainIntegrityError('KV does not match the stored blocks');
    }
    if (!this.governance.matches(this.store.history())) {
      throw new StatechainIntegrityError('value history does not match the stored blocks');
    }
  }
}

/** §4 step 1: hex shapes, never quoting the value. */
function checkHexShape(block: StatechainBlock): void {
  const need = (ok: boolean, field: string, n: number): void => {
    if (!ok) throw invalid(`invalid ${field}: must be ${n} lowercase hex characters`);
  };
  need(isLowerHex(block.hash, 64), 'hash', 64);
  need(isLowerHex(block.prev_hash, 64), 'prev_hash', 64);
  block.signatures.forEach((s, i) => {
    need(isLowerHex(s.public_key, 64), `signatures[${i}].public_key`, 64);
    need(isLowerHex(s.signature, 128), `signatures[${i}].signature`, 128);
  });
}

/** §4 step 2. A block that cannot be encoded fails the op rule that makes it so. */
function checkHash(block: StatechainBlock): void {
  if (!isEncodable(block)) block.ops.forEach((op, i) => checkOp(op, i));
  const computed = statechainHash(block);
  if (computed !== block.hash) throw invalid(`hash mismatch: got ${block.hash}, want ${computed}`);
}

/** Replay: the signatures of a stored block against the keyset that authorized it (§3). */
function checkSigners(block: StatechainBlock, kv: KvReader): void {
  const oracle = oraclePolicy(kv);
  if (oracle && block.ops.every((op) => op.key.startsWith(oracle.prefix))) {
    checkThreshold(block.hash, block.signatures, oracle, 'oracle');
  } else {
    checkThreshold(block.hash, block.signatures, readKeyset(kv.get('sys.dao_keyset')!), 'dao');
  }
}

/** §9: the genesis document. Throws LedgerError. */
function checkGenesis(g: StatechainBlock): void {
  if (g.index !== 0n) throw invalid('genesis: index must be 0');
  if (g.prev_hash !== ZERO_HASH) throw invalid('genesis: prev_hash must be 64 zeros');
  if (g.timestamp !== 0n) throw invalid('genesis: timestamp must be 0');
  if (g.ops.length === 0) throw invalid('genesis: block has no ops');
  checkHexShape(g);
  checkHash(g);
  const empty: KvReader = { get: () => null };
  const after = checkOps(g, empty, null);
  const dao = after.get('sys.dao_keyset');
  if (dao === null) throw invalid('genesis: sys.dao_keyset is missing');
  if (after.get('sys.network_id') === null) throw invalid('genesis: sys.network_id is missing');
  if (g.signatures.length > 0) checkThreshold(g.hash, g.signatures, readKeyset(dao), 'dao');
}

/** SQLite busy/locked: another connection holds the write lock; the submitter may retry. */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
