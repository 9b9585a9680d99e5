// Opening the node's SQLite file. The ledger, the state chain and the provisioning module keep
// their own tables in this one file.
//
// Durability choice: WAL with synchronous=NORMAL. A commit is appended to the WAL before the
// transaction returns, so a kill -9 of the process never loses or tears a committed block (the OS
// still holds the written pages). Only a power loss or kernel crash can drop the last few commits,
// and even then the database stays consistent (WAL replay stops at the last complete frame);
// peers re-supply such blocks by sync. synchronous=FULL would fsync every block for no gain
// against process crashes.
//
// With NORMAL, SQLite fsyncs only when it checkpoints the WAL into the database, inside whichever
// commit crosses the threshold. A threshold of 10,000 pages (~40 MiB of WAL) instead of the default
// 1,000 makes those fsyncs ten times rarer (measured: about half the per-block commit cost on a
// busy disk); journal_size_limit truncates the WAL file back after a checkpoint.
import Database from 'better-sqlite3';

export type { Database } from 'better-sqlite3';

export const WAL_AUTOCHECKPOINT_PAGES = 10_000;
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** SQLite page cache (grows only as used): the block and account indexes are keyed by random hashes. */
export const PAGE_CACHE_KIB = 65_536;

export function openDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  db.pragma('foreign_keys = OFF');
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  return db;
}
