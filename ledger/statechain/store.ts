// SQLite persistence of the state chain: blocks (as emitted JSON, values verbatim), the current KV
// and every key's value history (statechain.md §11). Tables are prefixed `sc_`.
import type { Database, Statement } from 'better-sqlite3';
import type { StatechainBlock } from '../service.js';
import { emitStatechainBlock, parseStatechainBlock } from './block.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sc_blocks (
  idx       INTEGER PRIMARY KEY,
  hash      TEXT    NOT NULL UNIQUE,
  timestamp INTEGER NOT NULL,
  body      TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS sc_kv (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sc_history (
  key       TEXT    NOT NULL,
  idx       INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,
  value     TEXT,
  PRIMARY KEY (key, idx)
) WITHOUT ROWID;
`;

export interface HistoryRow {
  key: string;
  idx: bigint;
  timestamp: bigint;
  /** null: deleted by that block. */
  value: string | null;
}

export class StatechainStore {
  private readonly insertBlock: Statement;
  private readonly upsertKv: Statement;
  private readonly deleteKv: Statement;
  private readonly upsertHistory: Statement;
  private readonly selectBlock: Statement;
  private readonly selectBlocks: Statement;
  private readonly selectCount: Statement;
  private readonly selectKv: Statement;
  private readonly scanKv: Statement;
  private readonly selectAllKv: Statement;
  private readonly selectHistory: Statement;

  constructor(private readonly db: Database) {
    db.exec(SCHEMA);
    this.insertBlock = db.prepare('INSERT INTO sc_blocks (idx, hash, timestamp, body) VALUES (?, ?, ?, ?)');
    this.upsertKv = db.prepare('INSERT INTO sc_kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    this.deleteKv = db.prepare('DELETE FROM sc_kv WHERE key = ?');
    this.upsertHistory = db.prepare(
      'INSERT INTO sc_history (key, idx, timestamp, value) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT(key, idx) DO UPDATE SET value = excluded.value',
    );
    this.selectBlock = db.prepare('SELECT body FROM sc_blocks WHERE idx = ?').pluck();
    this.selectBlocks = db.prepare('SELECT body FROM sc_blocks WHERE idx >= ? ORDER BY idx LIMIT ?').pluck();
    this.selectCount = db.prepare('SELECT count(*) FROM sc_blocks').pluck();
    this.selectKv = db.prepare('SELECT value FROM sc_kv WHERE key = ?').pluck();
    // Bytewise key order (BINARY collation); the prefix test uses a range start plus an exact match.
    this.scanKv = db.prepare(
      'SELECT key, value FROM sc_kv WHERE key >= ? AND key > ? AND substr(key, 1, ?) = ? ORDER BY key LIMIT ?',
    );
    this.selectAllKv = db.prepare('SELECT key, value FROM sc_kv ORDER BY key');
    this.selectHistory = db.prepare('SELECT key, idx, timestamp, value FROM sc_history ORDER BY idx, key').safeIntegers();
  }

  count(): number {
    return this.selectCount.get() as number;
  }

  blockAt(index: bigint): StatechainBlock | null {
    if (index < 0n || index > BigInt(Number.MAX_SAFE_INTEGER)) return null;
    const body = this.selectBlock.get(index) as string | undefined;
    return body === undefined ? null : parseStatechainBlock(body);
  }

  blocks(start: bigint, limit: number): StatechainBlock[] {
    if (limit <= 0 || start > BigInt(Number.MAX_SAFE_INTEGER)) return [];
    const bodies = this.selectBlocks.all(start < 0n ? 0n : start, limit) as string[];
    return bodies.map(parseStatechainBlock);
  }

  /** Every stored block body, in index order (boot replay). */
  *allBodies(): IterableIterator<{ idx: bigint; body: string }> {
    const it = this.db.prepare('SELECT idx, body FROM sc_blocks ORDER BY idx').safeIntegers().iterate();
    for (const row of it) yield row as { idx: bigint; body: string };
  }

  get(key: string): string | null {
    return (this.selectKv.get(key) as string | undefined) ?? null;
  }

  /** Keys with `prefix`, strictly after `after`, in bytewise order; `limit + 1` rows tell whether more follow. */
  scan(prefix: string, after: string | undefined, limit: number): { key: string; value: string }[] {
    return this.scanKv.all(prefix, after ?? '', prefix.length, prefix, limit) as { key: string; value: string }[];
  }

  allKv(): Map<string, string> {
    const out = new Map<string, string>();
    for (const row of this.selectAllKv.iterate() as IterableIterator<{ key: string; value: string }>) {
      out.set(row.key, row.value);
    }
    return out;
  }

  history(): HistoryRow[] {
    return this.selectHistory.all() as HistoryRow[];
  }

  /** Persist the block and apply its ops in order, atomically (§4 step 11). */
  append(block: StatechainBlock): void {
    this.db.transaction(() => {
      this.insertBlock.run(block.index, block.hash, block.timestamp, emitStatechainBlock(block));
      for (const op of block.ops) {
        const value = op.action === 'set' && op.value ? op.value.text : null;
        if (value === null) this.deleteKv.run(op.key);
        else this.upsertKv.run(op.key, value);
        this.upsertHistory.run(op.key, block.index, block.timestamp, value);
      }
    })();
  }
}
