// Prepared statements over the ledger tables. The store is dumb: it persists what the state layer
// decided, and loads it back at start. Every write of one block runs inside `transaction`.
//
// Three things keep the pages a group commit writes few (schema.ts explains why that matters): the
// store numbers accounts itself (address → id, all in memory); account rows, pending entries and
// commit locks are written at the end of the outermost transaction; and block hashes join the hash
// index in sorted runs of thousands, the newer ones held in memory meanwhile. So an account a batch
// touches several times (a block, its finality, the account's next block) is written once, a row
// that a batch both creates and removes (a send and its receive; a lock taken and resolved in one
// finality pass) never reaches its table, and a block costs no random index page of its own.
import type { Statement } from 'better-sqlite3';
import type { Database } from './db.js';
import { BLOCK_HASHES_UPTO, migrateLedgerSchema } from './schema.js';
import { parseJson, stringifyJson, isJsonObject } from '../codec/json.js';
import { parseBlockJson, blockJsonText } from '../codec/block.js';
import type { Block, Certificate, PendingEntry } from '../types.js';
import type { ConflictRecord } from '../service.js';
import type { AccountState, StoredLease } from '../state/records.js';
import { parseCertificateJson, certificateToJson } from '../certificates/codec.js';

export interface StagedRow {
  block: Block;
  stagedAt: bigint;
}

export interface CertificateRow {
  cert: Certificate;
  referenced: boolean;
}

type Row = Record<string, unknown>;

export function decodeBlock(body: string): Block {
  return parseBlockJson(parseJson(body));
}

function encodeLease(l: StoredLease): string {
  return stringifyJson(l);
}

function decodeLease(body: string): StoredLease {
  const v = parseJson(body) as unknown as StoredLease;
  v.renewals = v.renewals ?? [];
  return v;
}

function encodeAccountBalances(a: AccountState): string {
  return stringifyJson(Object.fromEntries(a.balances));
}

/** Decoded chain blocks most recently written or read; finality and the pipeline re-read them at once. */
const BLOCK_CACHE_SIZE = 4096;
/**
 * Hashes of newer blocks held in memory before they are added to the hash index as one sorted run
 * (schema.ts). A run of 4096 into an index of N pages writes about min(N, 4096) pages once.
 */
const HASH_RUN = 4096;

export interface LedgerStoreOptions {
  /** Blocks whose hashes are added to the hash index together (default 4096; tests use a few). */
  hashRun?: number;
}

interface HeldBlock {
  block: Block;
  height: number;
}

/** A commit lock row; `hash` null: deleted. */
interface LockWrite {
  account: string;
  previous: string;
  hash: string | null;
}

export class LedgerStore {
  private readonly s: Record<string, Statement>;
  // One wrapper for every transaction: better-sqlite3 builds a wrapper per db.transaction() call.
  private readonly runInTransaction: (fn: () => unknown) => unknown;
  /**
   * hash → block and height, oldest entry evicted first (a write or a read from the table makes an
   * entry newest). Any rolled-back transaction empties it, so it never holds a block the tables do not.
   */
  private readonly blockCache = new Map<string, HeldBlock>();
  /** account → height → hash of the cached blocks (nested: no key string is built per lookup). */
  private readonly hashAtHeight = new Map<string, Map<number, string>>();
  /** Hash → row id of the blocks past the hash index's watermark (not yet in `ledger_block_hashes`). */
  private readonly newHashes = new Map<string, number>();
  /** The highest block row id in the hash index. */
  private hashesIndexedUpTo = 0;
  /** Set when the open transaction adds newHashes to the index: the watermark it will commit. */
  private runUpTo: number | null = null;
  private readonly hashRun: number;
  /** Every account's row id; an id is taken when an account's first block or row is written. */
  private readonly accountIds = new Map<string, number>();
  private nextAccountId = 1;
  /**
   * Rows written in the open transaction, by key, flushed at its outermost end: account row id →
   * the account (null: deleted; the object as it is at the flush is written) …
   */
  private readonly accountWrites = new Map<number, { address: string; account: AccountState | null }>();
  /** … send hash → entry (null: deleted) … */
  private readonly pendingWrites = new Map<string, PendingEntry | null>();
  /** … and `account:previous` → commit lock. */
  private readonly lockWrites = new Map<string, LockWrite>();
  /** How to undo each change to accountIds and the deferred rows, so a rolled-back savepoint undoes its own. */
  private readonly undo: (() => void)[] = [];
  private depth = 0;
  /** Deferred writes recorded so far: counted as changes, as they will be once flushed. */
  private deferredChanges = 0;

  constructor(
    readonly db: Database,
    opts: LedgerStoreOptions = {},
  ) {
    this.hashRun = opts.hashRun ?? HASH_RUN;
    migrateLedgerSchema(db);
    this.runInTransaction = db.transaction((fn: () => unknown) => fn());
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      metaGet: p(`SELECT value FROM ledger_meta WHERE key = ?`),
      metaSet: p(`INSERT INTO ledger_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`),
      blockInsert: p(`INSERT INTO ledger_blocks (hash, account, account_id, height, timestamp, body) VALUES (?, ?, ?, ?, ?, ?)`),
      blockDelete: p(`DELETE FROM ledger_blocks WHERE id = ?`),
      blockGet: p(`SELECT body, height FROM ledger_blocks WHERE id = ?`),
      blockPosition: p(`SELECT account, height FROM ledger_blocks WHERE id = ?`),
      hashGet: p(`SELECT block_id FROM ledger_block_hashes WHERE hash = ?`),
      hashDelete: p(`DELETE FROM ledger_block_hashes WHERE hash = ?`),
      hashesAdd: p(`INSERT INTO ledger_block_hashes (hash, block_id) SELECT hash, id FROM ledger_blocks WHERE id > ? ORDER BY hash`),
      hashesPastIndex: p(`SELECT id, hash FROM ledger_blocks WHERE id > ?`),
      blockAt: p(`SELECT body FROM ledger_blocks WHERE account_id = ? AND height = ?`),
      chainPage: p(`SELECT body, height FROM ledger_blocks WHERE account_id = ? AND height > ? ORDER BY height ASC LIMIT ?`),
      blockCount: p(`SELECT COUNT(*) AS n FROM ledger_blocks`),
      totalChanges: p(`SELECT total_changes() AS n`),
      accountPut: p(`INSERT INTO ledger_accounts (id, address, frontier, height, last_ts, pub_key, keyset, representative, final_height, balances)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET frontier = excluded.frontier, height = excluded.height, last_ts = excluded.last_ts,
          pub_key = excluded.pub_key, keyset = excluded.keyset, representative = excluded.representative,
          final_height = excluded.final_height, balances = excluded.balances`),
      accountDelete: p(`DELETE FROM ledger_accounts WHERE id = ?`),
      accountsAll: p(`SELECT * FROM ledger_accounts`),
      pendingPut: p(`INSERT INTO ledger_pending (send_hash, source, destination, amount, asset, timestamp) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(send_hash) DO UPDATE SET amount = excluded.amount`),
      pendingDelete: p(`DELETE FROM ledger_pending WHERE send_hash = ?`),
      pendingAll: p(`SELECT * FROM ledger_pending`),
      leasePut: p(`INSERT INTO ledger_leases (lease_hash, state, consumer, provider, body) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT(lease_hash) DO UPDATE SET state = excluded.state, body = excluded.body`),
      leaseDelete: p(`DELETE FROM ledger_leases WHERE lease_hash = ?`),
      leasesAll: p(`SELECT body FROM ledger_leases`),
      stagedPut: p(`INSERT OR IGNORE INTO ledger_staged (hash, account, previous, staged_at, body) VALUES (?, ?, ?, ?, ?)`),
      stagedDelete: p(`DELETE FROM ledger_staged WHERE hash = ?`),
      stagedAll: p(`SELECT body, staged_at FROM ledger_staged`),
      conflictPut: p(`INSERT INTO ledger_conflicts (account, previous, body) VALUES (?, ?, ?)
        ON CONFLICT(account, previous) DO UPDATE SET body = excluded.body`),
      conflictDelete: p(`DELETE FROM ledger_conflicts WHERE account = ? AND previous = ?`),
      conflictsAll: p(`SELECT body FROM ledger_conflicts`),
      lockPut: p(`INSERT OR IGNORE INTO ledger_commit_locks (account, previous, hash) VALUES (?, ?, ?)`),
      lockDelete: p(`DELETE FROM ledger_commit_locks WHERE account = ? AND previous = ?`),
      locksAll: p(`SELECT account, previous, hash FROM ledger_commit_locks`),
      counterSet: p(`INSERT INTO ledger_counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value`),
      countersAll: p(`SELECT name, value FROM ledger_counters`),
      certPut: p(`INSERT INTO ledger_certificates (hash, provider, referenced, body) VALUES (?, ?, ?, ?)
        ON CONFLICT(hash) DO UPDATE SET referenced = excluded.referenced`),
      certDelete: p(`DELETE FROM ledger_certificates WHERE hash = ?`),
      certsAll: p(`SELECT body, referenced FROM ledger_certificates`),
    };
    this.readAccountIds(db.prepare(`SELECT id, address FROM ledger_accounts`).all() as Row[]);
    this.hashesIndexedUpTo = Number(this.meta(BLOCK_HASHES_UPTO) ?? 0);
    for (const r of this.s.hashesPastIndex!.all(this.hashesIndexedUpTo) as { id: number; hash: string }[]) {
      this.newHashes.set(r.hash, r.id);
    }
  }

  private readAccountIds(rows: Row[]): void {
    this.accountIds.clear();
    this.nextAccountId = 1;
    for (const r of rows) {
      const id = r.id as number;
      this.accountIds.set(r.address as string, id);
      this.nextAccountId = Math.max(this.nextAccountId, id + 1);
    }
  }

  /** Runs `fn` in one transaction (a savepoint when nested). */
  transaction<T>(fn: () => T): T {
    const outermost = this.depth === 0;
    const undoMark = this.undo.length;
    this.depth++;
    try {
      const result = this.runInTransaction(() => {
        const result = fn();
        if (outermost) this.flushDeferred();
        return result;
      }) as T;
      if (outermost && this.runUpTo !== null) {
        // Committed: the run's hashes are in the index now.
        this.hashesIndexedUpTo = this.runUpTo;
        this.newHashes.clear();
      }
      return result;
    } catch (e) {
      this.rollBackMemory(undoMark);
      throw e;
    } finally {
      this.depth--;
      if (outermost) {
        this.accountWrites.clear();
        this.pendingWrites.clear();
        this.lockWrites.clear();
        this.undo.length = 0;
        this.runUpTo = null;
      }
    }
  }

  /**
   * `fn` as one unit of the open transaction (or as a transaction of its own when none is open)
   * without an SQL savepoint: a throw undoes the deferred rows and memory it changed. Only for an
   * `fn` whose one immediate write is its last step, which a single statement makes atomic;
   * anything else takes `transaction`.
   */
  withoutSavepoint(fn: () => void): void {
    if (this.depth === 0) {
      this.transaction(fn);
      return;
    }
    const undoMark = this.undo.length;
    try {
      fn();
    } catch (e) {
      this.rollBackMemory(undoMark);
      throw e;
    }
  }

  /** After a failed unit: undo what it changed in memory (deferred rows, ids) and drop the cached blocks. */
  private rollBackMemory(undoMark: number): void {
    this.forgetCachedBlocks();
    while (this.undo.length > undoMark) this.undo.pop()!();
  }

  /** Runs `fn` in the open transaction, or in one of its own when none is open (no savepoint when nested). */
  private inTransaction(fn: () => void): void {
    if (this.depth === 0) this.transaction(fn);
    else fn();
  }

  /** Record `value` as the open transaction's last word on `key` (outside one, it is written at once). */
  private defer<K, V>(rows: Map<K, V>, key: K, value: V): void {
    this.inTransaction(() => {
      const before = rows.get(key);
      this.undo.push(() => {
        if (before === undefined) rows.delete(key);
        else rows.set(key, before);
      });
      rows.set(key, value);
      this.deferredChanges++;
    });
  }

  /** Deferred rows as the transaction leaves them; deleting one never stored costs a lookup only. */
  private flushDeferred(): void {
    for (const [id, { address, account: a }] of this.accountWrites) {
      if (a === null) {
        this.s.accountDelete!.run(id);
        continue;
      }
      // Positional parameters, in column order: cheaper to bind than named ones.
      this.s.accountPut!.run(
        id,
        address,
        a.frontier,
        a.height,
        a.lastTimestamp.toString(),
        a.pubKey,
        a.keyset ? stringifyJson(a.keyset) : '',
        a.representative,
        a.finalHeight,
        encodeAccountBalances(a),
      );
    }
    for (const [hash, p] of this.pendingWrites) {
      if (p === null) this.s.pendingDelete!.run(hash);
      else this.s.pendingPut!.run(hash, p.source, p.destination, p.amount.toString(), p.asset, p.timestamp.toString());
    }
    for (const { account, previous, hash } of this.lockWrites.values()) {
      if (hash === null) this.s.lockDelete!.run(account, previous);
      else this.s.lockPut!.run(account, previous, hash);
    }
    if (this.newHashes.size >= this.hashRun) {
      let upTo = this.hashesIndexedUpTo;
      for (const id of this.newHashes.values()) if (id > upTo) upTo = id;
      this.s.hashesAdd!.run(this.hashesIndexedUpTo);
      this.setMeta(BLOCK_HASHES_UPTO, String(upTo));
      this.runUpTo = upTo;
    }
  }

  /**
   * Rows changed on this connection so far (rolled-back changes included): SQLite's count plus every
   * deferred write recorded, so a transaction whose writes were all deferred still counts.
   */
  totalChanges(): number {
    return (this.s.totalChanges!.get() as { n: number }).n + this.deferredChanges;
  }

  // --- meta and counters

  meta(key: string): string | undefined {
    return (this.s.metaGet!.get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.s.metaSet!.run(key, value);
  }

  counters(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const r of this.s.countersAll!.all() as { name: string; value: string }[]) out.set(r.name, BigInt(r.value));
    return out;
  }

  setCounter(name: string, value: bigint): void {
    this.s.counterSet!.run(name, value.toString());
  }

  // --- blocks

  insertBlock(block: Block, height: number): void {
    this.inTransaction(() => {
      const { hash } = block;
      const id = Number(
        this.s.blockInsert!.run(hash, block.account, this.accountId(block.account), height, block.timestamp, blockJsonText(block)).lastInsertRowid,
      );
      this.newHashes.set(hash, id);
      this.undo.push(() => this.newHashes.delete(hash));
      this.cacheBlock(block, height);
    });
  }

  deleteBlock(hash: string): void {
    this.inTransaction(() => {
      const id = this.blockId(hash);
      if (id === undefined) return;
      this.s.blockDelete!.run(id);
      if (this.newHashes.delete(hash)) this.undo.push(() => this.newHashes.set(hash, id));
      else this.s.hashDelete!.run(hash);
      this.uncache(hash);
    });
  }

  /** A block's row id: from memory for blocks past the hash index's watermark, else from the index. */
  private blockId(hash: string): number | undefined {
    return this.newHashes.get(hash) ?? (this.s.hashGet!.get(hash) as { block_id: number } | undefined)?.block_id;
  }

  /** Held blocks are shared: callers must not modify them. */
  block(hash: string): HeldBlock | undefined {
    const cached = this.blockCache.get(hash);
    if (cached) return cached;
    const id = this.blockId(hash);
    const r = id === undefined ? undefined : (this.s.blockGet!.get(id) as { body: string; height: number } | undefined);
    return r && this.cacheBlock(decodeBlock(r.body), r.height);
  }

  hasBlock(hash: string): boolean {
    return this.blockCache.has(hash) || this.blockId(hash) !== undefined;
  }

  /** A chain block's account and height, without decoding (or caching) its body. */
  position(hash: string): { account: string; height: number } | undefined {
    const cached = this.blockCache.get(hash);
    if (cached) return { account: cached.block.account, height: cached.height };
    const id = this.blockId(hash);
    return id === undefined ? undefined : (this.s.blockPosition!.get(id) as { account: string; height: number } | undefined);
  }

  blockAt(account: string, height: number): Block | undefined {
    const hash = this.hashAtHeight.get(account)?.get(height);
    const cached = hash === undefined ? undefined : this.blockCache.get(hash);
    if (cached) return cached.block;
    const id = this.accountIds.get(account);
    if (id === undefined) return undefined;
    const r = this.s.blockAt!.get(id, height) as { body: string } | undefined;
    return r && this.cacheBlock(decodeBlock(r.body), height).block;
  }

  private cacheBlock(block: Block, height: number): HeldBlock {
    const held = { block, height };
    this.blockCache.delete(block.hash);
    this.blockCache.set(block.hash, held);
    const heights = this.hashAtHeight.get(block.account);
    if (heights) heights.set(height, block.hash);
    else this.hashAtHeight.set(block.account, new Map([[height, block.hash]]));
    if (this.blockCache.size > BLOCK_CACHE_SIZE) this.uncache(this.blockCache.keys().next().value as string);
    return held;
  }

  private uncache(hash: string): void {
    const held = this.blockCache.get(hash);
    if (!held) return;
    this.blockCache.delete(hash);
    const heights = this.hashAtHeight.get(held.block.account);
    if (heights?.get(held.height) !== hash) return;
    heights.delete(held.height);
    if (heights.size === 0) this.hashAtHeight.delete(held.block.account);
  }

  private forgetCachedBlocks(): void {
    this.blockCache.clear();
    this.hashAtHeight.clear();
  }

  /** Blocks with height in (afterHeight, afterHeight + limit], oldest first. */
  chain(account: string, afterHeight: number, limit: number): { block: Block; height: number }[] {
    const id = this.accountIds.get(account);
    if (id === undefined) return [];
    return (this.s.chainPage!.all(id, afterHeight, limit) as { body: string; height: number }[]).map((r) => ({
      block: decodeBlock(r.body),
      height: r.height,
    }));
  }

  blockCount(): number {
    return (this.s.blockCount!.get() as { n: number }).n;
  }

  // --- accounts

  /** The account's row id, taken now if it has none yet. */
  private accountId(address: string): number {
    let id = this.accountIds.get(address);
    if (id === undefined) {
      id = this.nextAccountId++;
      this.accountIds.set(address, id);
      if (this.depth > 0) this.undo.push(() => this.accountIds.delete(address));
    }
    return id;
  }

  /**
   * Write the account's row. The row is written from the object as it is when the transaction ends:
   * a later change to the same object (the state raising its final height) needs only another
   * `putAccount`, which costs no further row write.
   */
  putAccount(a: AccountState): void {
    this.defer(this.accountWrites, this.accountId(a.address), { address: a.address, account: a });
  }

  deleteAccount(address: string): void {
    this.inTransaction(() => {
      const id = this.accountIds.get(address);
      if (id === undefined) return;
      this.defer(this.accountWrites, id, { address, account: null });
      this.accountIds.delete(address);
      this.undo.push(() => this.accountIds.set(address, id));
    });
  }

  /** Every account row; also (re)reads the account ids. */
  loadAccounts(): AccountState[] {
    const rows = this.s.accountsAll!.all() as Row[];
    this.readAccountIds(rows);
    return rows.map((r) => {
      const balances = parseJson(r.balances as string);
      const keysetJson = r.keyset === '' ? null : parseJson(r.keyset as string);
      return {
        address: r.address as string,
        frontier: r.frontier as string,
        height: r.height as number,
        lastTimestamp: BigInt(r.last_ts as string),
        pubKey: r.pub_key as string,
        keyset: isJsonObject(keysetJson)
          ? { keys: keysetJson.keys as string[], threshold: Number(keysetJson.threshold) }
          : null,
        representative: r.representative as string,
        finalHeight: r.final_height as number,
        balances: new Map(Object.entries(balances as Record<string, bigint>)),
      };
    });
  }

  // --- pending

  putPending(p: PendingEntry): void {
    this.defer(this.pendingWrites, p.send_hash, p);
  }

  deletePending(hash: string): void {
    this.defer(this.pendingWrites, hash, null);
  }

  loadPending(): PendingEntry[] {
    return (this.s.pendingAll!.all() as Row[]).map((r) => ({
      send_hash: r.send_hash as string,
      source: r.source as string,
      destination: r.destination as string,
      amount: BigInt(r.amount as string),
      asset: r.asset as string,
      timestamp: BigInt(r.timestamp as string),
    }));
  }

  // --- leases

  putLease(l: StoredLease): void {
    this.s.leasePut!.run(l.lease_hash, l.state, l.consumer, l.provider, encodeLease(l));
  }

  deleteLease(hash: string): void {
    this.s.leaseDelete!.run(hash);
  }

  loadLeases(): StoredLease[] {
    return (this.s.leasesAll!.all() as { body: string }[]).map((r) => decodeLease(r.body));
  }

  // --- conflicts, staged siblings, commit locks

  putStaged(block: Block, stagedAt: bigint): void {
    this.s.stagedPut!.run(block.hash, block.account, block.previous, stagedAt.toString(), blockJsonText(block));
  }

  deleteStaged(hash: string): void {
    this.s.stagedDelete!.run(hash);
  }

  loadStaged(): StagedRow[] {
    return (this.s.stagedAll!.all() as { body: string; staged_at: string }[]).map((r) => ({
      block: decodeBlock(r.body),
      stagedAt: BigInt(r.staged_at),
    }));
  }

  putConflict(c: ConflictRecord): void {
    this.s.conflictPut!.run(c.account_address, c.previous_hash, stringifyJson(c));
  }

  deleteConflict(account: string, previous: string): void {
    this.s.conflictDelete!.run(account, previous);
  }

  loadConflicts(): ConflictRecord[] {
    return (this.s.conflictsAll!.all() as { body: string }[]).map((r) => parseJson(r.body) as unknown as ConflictRecord);
  }

  putLock(account: string, previous: string, hash: string): void {
    this.defer(this.lockWrites, `${account}:${previous}`, { account, previous, hash });
  }

  deleteLock(account: string, previous: string): void {
    this.defer(this.lockWrites, `${account}:${previous}`, { account, previous, hash: null });
  }

  loadLocks(): { account: string; previous: string; hash: string }[] {
    return this.s.locksAll!.all() as { account: string; previous: string; hash: string }[];
  }

  // --- certificates

  putCertificate(cert: Certificate, referenced: boolean): void {
    this.s.certPut!.run(cert.hash, cert.provider, referenced ? 1 : 0, stringifyJson(certificateToJson(cert)));
  }

  deleteCertificate(hash: string): void {
    this.s.certDelete!.run(hash);
  }

  loadCertificates(): CertificateRow[] {
    return (this.s.certsAll!.all() as { body: string; referenced: number }[]).map((r) => ({
      cert: parseCertificateJson(parseJson(r.body)),
      referenced: r.referenced === 1,
    }));
  }
}
