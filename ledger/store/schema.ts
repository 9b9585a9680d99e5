// Ledger tables (the state chain keeps its own `sc_*` tables in the same file). 64-bit values are
// stored as decimal TEXT so nothing above 2^53 is ever rounded.
//
// Indexes: an account's chain by (account, height); blocks by hash; frontiers are the accounts
// table; leases by state, provider and consumer. Two queries are served from memory instead, since
// every index costs a page write in each block's commit (measured: the two together were ~25 % of
// the per-block commit): pending entries by destination (every pending entry is held in memory,
// indexed by destination, rebuilt from this table at start) and the newest blocks (the SPEC's
// 1000-block cache, ledger/state/recent.ts, seeded at start through the chain index).
import type { Database } from './db.js';

export const LEDGER_SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ledger_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger_blocks (
  hash      TEXT PRIMARY KEY,
  account   TEXT NOT NULL,
  height    INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,
  body      TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS ledger_blocks_chain ON ledger_blocks (account, height);
CREATE TABLE IF NOT EXISTS ledger_accounts (
  address        TEXT PRIMARY KEY,
  frontier       TEXT NOT NULL,
  height         INTEGER NOT NULL,
  last_ts        TEXT NOT NULL,
  pub_key        TEXT NOT NULL,
  keyset         TEXT NOT NULL,
  representative TEXT NOT NULL,
  final_height   INTEGER NOT NULL,
  balances       TEXT NOT NULL
) WITHOUT ROWID;
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

export function migrateLedgerSchema(db: Database): void {
  db.exec(SCHEMA);
  db.exec(DROPPED);
  const row = db.prepare(`SELECT value FROM ledger_meta WHERE key = 'schema_version'`).get() as
    | { value: string }
    | undefined;
  if (!row) {
    db.prepare(`INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?)`).run(String(LEDGER_SCHEMA_VERSION));
  } else if (Number(row.value) !== LEDGER_SCHEMA_VERSION) {
    throw new Error(`ledger store: unsupported schema version ${row.value}`);
  }
}
