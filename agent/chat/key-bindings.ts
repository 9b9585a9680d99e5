// Address → public key bindings (chat-and-directory.md §5.4). The ledger's opening-block key comes
// first; otherwise the bindings this node verified from directory registrations and chat envelopes,
// kept beyond the directory TTL, persisted in their own SQLite file, at most 1,000,000 (LRU).
import Database from 'better-sqlite3';
import { accountAddress } from '../../ledger/crypto/address.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import type { KeyLookup } from './read-auth.js';

export const MAX_KEY_BINDINGS = 1_000_000;

export class KeyBindings implements KeyLookup {
  private readonly db: Database.Database;
  private readonly selectStmt: Database.Statement<[string], { pub_key: string }>;
  private readonly touchStmt: Database.Statement<[number, string]>;
  private readonly upsertStmt: Database.Statement<[string, string, number]>;
  private readonly evictStmt: Database.Statement<[number]>;
  private count: number;
  private clock: number;

  /**
   * @param ledgerKeyOf the ledger's `publicKeyOf` (consulted first)
   * @param path SQLite file for the learned bindings; `:memory:` keeps them for this process only
   */
  constructor(
    private readonly ledgerKeyOf: (address: string) => string | null,
    path: string,
    private readonly capacity = MAX_KEY_BINDINGS,
  ) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS key_bindings (address TEXT PRIMARY KEY, pub_key TEXT NOT NULL, last_used INTEGER NOT NULL);' +
        'CREATE INDEX IF NOT EXISTS key_bindings_lru ON key_bindings (last_used);',
    );
    this.selectStmt = this.db.prepare('SELECT pub_key FROM key_bindings WHERE address = ?');
    this.touchStmt = this.db.prepare('UPDATE key_bindings SET last_used = ? WHERE address = ?');
    this.upsertStmt = this.db.prepare(
      'INSERT INTO key_bindings (address, pub_key, last_used) VALUES (?, ?, ?) ' +
        'ON CONFLICT(address) DO UPDATE SET pub_key = excluded.pub_key, last_used = excluded.last_used',
    );
    this.evictStmt = this.db.prepare(
      'DELETE FROM key_bindings WHERE address IN (SELECT address FROM key_bindings ORDER BY last_used LIMIT ?)',
    );
    const stats = this.db.prepare('SELECT COUNT(*) AS n, COALESCE(MAX(last_used), 0) AS m FROM key_bindings').get() as {
      n: number;
      m: number;
    };
    this.count = stats.n;
    this.clock = stats.m;
  }

  publicKeyOf(address: string): string | null {
    const fromLedger = this.ledgerKeyOf(address);
    if (fromLedger) return fromLedger;
    const row = this.selectStmt.get(address);
    if (!row) return null;
    this.touchStmt.run(++this.clock, address);
    return row.pub_key;
  }

  /** Keep a binding the caller verified; ignored unless the key derives the address (self-certifying). */
  remember(address: string, publicKey: string): void {
    if (!isLowerHex(publicKey, 64) || accountAddress(publicKey) !== address) return;
    const existed = this.selectStmt.get(address) !== undefined;
    this.upsertStmt.run(address, publicKey, ++this.clock);
    if (!existed && ++this.count > this.capacity) {
      this.evictStmt.run(this.count - this.capacity);
      this.count = this.capacity;
    }
  }

  close(): void {
    this.db.close();
  }
}
