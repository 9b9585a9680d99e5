// Ledger tables (the state chain keeps its own `sc_*` tables in the same file). 64-bit values are
// stored as decimal TEXT so nothing above 2^53 is ever rounded.
//
// Indexes: blocks by hash; an account's chain by (account id, height); leases by state, provider
// and consumer. Every index a block touches costs a page write in the block's commit, and a key
// spread at random (a hash, an address) costs one page per block: measured, a batch of 32
// send/receive blocks wrote ~120 WAL pages with address-keyed accounts and chains. So accounts are
// rows numbered in creation order (the address → id map is held in memory, as every account is),
// and chains are keyed by that number: new accounts and their chains append to the same few pages.
// Blocks are rows numbered in insertion order too, and the hash index (`ledger_block_hashes`) is
// written in sorted runs: the store keeps the hashes of the blocks inserted since the last run in
// memory (rebuilt at start from the rows past the run's watermark) and adds them to the index
// thousands at a time, so each index page is written once per run instead of once per block
// (measured: the index was ~60 % of the WAL a group commit wrote).
// Two queries are served from memory instead of indexes: pending entries by destination (every
// pending entry is held in memory, indexed by destination, rebuilt from this table at start) and
// the newest blocks (the SPEC's 1000-block cache, ledger/state/recent.ts, seeded at start through
// the chain index).
import type { Database } from './db.js';

export const LEDGER_SCHEMA_VERSION = 3;

/** The accounts table's columns (schema 2), shared by its creation and the migration to it. */
const ACCOUNT_COLUMNS = `
  id             INTEGER PRIMARY KEY,
  address        TEXT NOT NULL,
  frontier       TEXT NOT NULL,
  height         INTEGER NOT NULL,
  last_ts        TEXT NOT NULL,
  pub_key        TEXT NOT NULL,
  keyset         TEXT NOT NULL,
  representative TEXT NOT NULL,
  final_height   INTEGER NOT NULL,
  balances       TEXT NOT NULL
`;

/**
 * The blocks table's columns (schema 3), shared by its creation and the migration to it. Row ids
 * only grow (AUTOINCREMENT: a deleted block's id is never given again), so the rows past the hash
 * index's watermark are exactly the blocks inserted since its last run.
 */
const BLOCK_COLUMNS = `
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  hash       TEXT NOT NULL,
  account    TEXT NOT NULL,
  height     INTEGER NOT NULL,
  timestamp  INTEGER NOT NULL,
  body       TEXT NOT NULL,
  account_id INTEGER NOT NULL
`;

/** The hash index: hash → block row id, for blocks up to the `block_hashes_upto` meta row id. */
const BLOCK_HASHES = `
CREATE TABLE IF NOT EXISTS ledger_block_hashes (
  hash     TEXT PRIMARY KEY,
  block_id INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** Meta key: the highest block row id whose hash is in `ledger_block_hashes`. */
export const BLOCK_HASHES_UPTO = 'block_hashes_upto';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ledger_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger_blocks (${BLOCK_COLUMNS});
CREATE UNIQUE INDEX IF NOT EXISTS ledger_blocks_chain ON ledger_blocks (account_id, height);
${BLOCK_HASHES}
CREATE TABLE IF NOT EXISTS ledger_accounts (${ACCOUNT_COLUMNS});
CREATE TABLE IF NOT EXISTS ledger_pending (
  send_hash   TEXT PRIMARY KEY,
  source      TEXT NOT NULL,
  destination TEXT NOT NULL,
  amount      TEXT NOT NULL,
  asset       TEXT NOT NULL,
  timestamp   TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger_leases (
  lease_hash TEXT PRIMARY KEY,
  state      TEXT NOT NULL,
  consumer   TEXT NOT NULL,
  provider   TEXT NOT NULL,
  body       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_leases_state ON ledger_leases (state, lease_hash);
CREATE INDEX IF NOT EXISTS ledger_leases_provider ON ledger_leases (provider, lease_hash);
CREATE INDEX IF NOT EXISTS ledger_leases_consumer ON ledger_leases (consumer, lease_hash);
CREATE TABLE IF NOT EXISTS ledger_staged (
  hash      TEXT PRIMARY KEY,
  account   TEXT NOT NULL,
  previous  TEXT NOT NULL,
  staged_at TEXT NOT NULL,
  body      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_staged_position ON ledger_staged (account, previous);
CREATE TABLE IF NOT EXISTS ledger_conflicts (
  account  TEXT NOT NULL,
  previous TEXT NOT NULL,
  body     TEXT NOT NULL,
  PRIMARY KEY (account, previous)
);
CREATE TABLE IF NOT EXISTS ledger_commit_locks (
  account  TEXT NOT NULL,
  previous TEXT NOT NULL,
  hash     TEXT NOT NULL,
  PRIMARY KEY (account, previous)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger_counters (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger_certificates (
  hash       TEXT PRIMARY KEY,
  provider   TEXT NOT NULL,
  referenced INTEGER NOT NULL,
  body       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_certificates_provider ON ledger_certificates (provider);
`;

/** Indexes of earlier builds that memory now serves (see above). */
const DROPPED = `
DROP INDEX IF EXISTS ledger_blocks_newest;
DROP INDEX IF EXISTS ledger_pending_destination;
`;

/**
 * Schema 1 → 2: accounts keyed by address become rows numbered in address order, and the chain
 * index moves from (account, height) to (account_id, height).
 */
const MIGRATE_1_TO_2 = `
CREATE TABLE ledger_accounts_v2 (${ACCOUNT_COLUMNS});
INSERT INTO ledger_accounts_v2 (address, frontier, height, last_ts, pub_key, keyset, representative, final_height, balances)
  SELECT address, frontier, height, last_ts, pub_key, keyset, representative, final_height, balances
  FROM ledger_accounts ORDER BY address;
DROP TABLE ledger_accounts;
ALTER TABLE ledger_accounts_v2 RENAME TO ledger_accounts;
CREATE INDEX ledger_accounts_migration ON ledger_accounts (address);
DROP INDEX ledger_blocks_chain;
ALTER TABLE ledger_blocks ADD COLUMN account_id INTEGER NOT NULL DEFAULT 0;
UPDATE ledger_blocks SET account_id = (SELECT id FROM ledger_accounts a WHERE a.address = ledger_blocks.account);
DROP INDEX ledger_accounts_migration;
`;

/**
 * Schema 2 → 3: blocks get a row id column (the hash index refers to it) instead of a hash primary
 * key, and every existing hash goes into the hash index in one sorted run.
 */
const MIGRATE_2_TO_3 = `
DROP TABLE IF EXISTS ledger_block_hashes;
CREATE TABLE ledger_blocks_v3 (${BLOCK_COLUMNS});
INSERT INTO ledger_blocks_v3 (id, hash, account, height, timestamp, body, account_id)
  SELECT rowid, hash, account, height, timestamp, body, account_id FROM ledger_blocks ORDER BY rowid;
DROP TABLE ledger_blocks;
ALTER TABLE ledger_blocks_v3 RENAME TO ledger_blocks;
${BLOCK_HASHES}
INSERT INTO ledger_block_hashes (hash, block_id) SELECT hash, id FROM ledger_blocks ORDER BY hash;
INSERT INTO ledger_meta (key, value) VALUES ('${BLOCK_HASHES_UPTO}', (SELECT COALESCE(MAX(id), 0) FROM ledger_blocks))
  ON CONFLICT(key) DO UPDATE SET value = excluded.value;
`;

export function migrateLedgerSchema(db: Database): void {
  db.transaction(() => {
    const version = storedVersion(db);
    if (version !== undefined && version !== 1 && version !== 2 && version !== LEDGER_SCHEMA_VERSION) {
      throw new Error(`ledger store: unsupported schema version ${version}`);
    }
    if (version === 1) db.exec(MIGRATE_1_TO_2);
    if (version === 1 || version === 2) db.exec(MIGRATE_2_TO_3);
    db.exec(SCHEMA);
    db.exec(DROPPED);
    db.prepare(`INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`).run(
      String(LEDGER_SCHEMA_VERSION),
    );
  })();
}

function storedVersion(db: Database): number | undefined {
  const hasMeta = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'`).get();
  if (!hasMeta) return undefined;
  const row = db.prepare(`SELECT value FROM ledger_meta WHERE key = 'schema_version'`).get() as { value: string } | undefined;
  return row === undefined ? undefined : Number(row.value);
}
