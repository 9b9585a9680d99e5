// The store's page-saving layout (ledger/store/schema.ts): accounts numbered by the store, chains
// keyed by that number, pending entries written at the end of the outermost transaction — and the
// migration of a schema-1 file to it.
import { beforeEach, describe, expect, it } from 'vitest';
import { LedgerStore } from '../../ledger/store/ledger-store.js';
import { LEDGER_SCHEMA_VERSION } from '../../ledger/store/schema.js';
import type { AccountState } from '../../ledger/state/records.js';
import type { Block, PendingEntry } from '../../ledger/types.js';
import { Chains, dev, openTestLedger, type TestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D7 = dev(7);
const D8 = dev(8);
const OPTS = { identitySeed: D1.seed, stabilityWindowNs: 0n };

let t: TestLedger;
let c: Chains;
beforeEach(() => {
  t = openTestLedger(OPTS);
  c = new Chains(t);
});

const pendingRows = () => (t.db.prepare(`SELECT send_hash FROM ledger_pending ORDER BY send_hash`).all() as { send_hash: string }[]).map((r) => r.send_hash);

/** dev1's sends (not submitted), one per recipient. */
const sends = (recipients: string[], amount: bigint): Block[] => c.sendsAhead(D1, recipients.map((to) => ({ to, amount })));
const openingReceive = (who: typeof D7, send: Block): Block => c.openingReceive(who, send);

describe('pending entries in a group commit', () => {
  it('a send received in the same batch never reaches the table; one left unreceived does, and survives a restart', () => {
    t.db.exec(`
      CREATE TEMP TABLE pending_inserted (send_hash TEXT);
      CREATE TEMP TRIGGER pending_insert_seen AFTER INSERT ON ledger_pending BEGIN
        INSERT INTO pending_inserted VALUES (new.send_hash);
      END;
    `);
    const [s7, s8] = sends([D7.address, D8.address], 1000n);
    const results = t.ledger.submitMany([s7!, openingReceive(D7, s7!), s8!]);
    expect(results.every((r) => 'status' in r && r.status === 'applied')).toBe(true);

    expect(t.db.prepare(`SELECT send_hash FROM pending_inserted`).all()).toEqual([{ send_hash: s8!.hash }]);
    expect(pendingRows()).toEqual([s8!.hash]);
    expect(t.ledger.pending().map((p) => p.send_hash)).toEqual([s8!.hash]);
    t = t.reopen(OPTS);
    expect(t.ledger.pending().map((p) => p.send_hash)).toEqual([s8!.hash]);
    expect(t.ledger.pendingFor(D8.address)[0]?.amount).toBe(1000n);
  });

  it('a receive in a later batch deletes the stored entry', () => {
    const [s7] = sends([D7.address], 1000n);
    t.ledger.submitMany([s7!]);
    expect(pendingRows()).toEqual([s7!.hash]);
    t.ledger.submitMany([openingReceive(D7, s7!)]);
    expect(pendingRows()).toEqual([]);
  });
});

describe('account rows in a group commit', () => {
  it('an account touched by several blocks and their finality is written once, as the batch leaves it, and reads back after a restart', () => {
    t.db.exec(`
      CREATE TEMP TABLE account_writes (address TEXT);
      CREATE TEMP TRIGGER account_insert_seen AFTER INSERT ON ledger_accounts BEGIN
        INSERT INTO account_writes VALUES (new.address);
      END;
      CREATE TEMP TRIGGER account_update_seen AFTER UPDATE ON ledger_accounts BEGIN
        INSERT INTO account_writes VALUES (new.address);
      END;
    `);
    const [s7, s8] = sends([D7.address, D8.address], 1000n);
    const results = t.ledger.submitMany([s7!, s8!, openingReceive(D7, s7!)]);
    expect(results.every((r) => 'status' in r && r.status === 'applied')).toBe(true);

    const writes = (t.db.prepare(`SELECT address FROM account_writes`).all() as { address: string }[]).map((r) => r.address);
    expect(writes.sort()).toEqual([D1.address, D7.address].sort());
    // This node holds the voting weight (stability window 0): every block is final within the batch.
    const height = t.ledger.accountChain(D1.address).total;
    const row = t.db.prepare(`SELECT height, final_height FROM ledger_accounts WHERE address = ?`).get(D1.address);
    expect(row).toEqual({ height, final_height: height });
    const seen = () => [D1, D7].map((d) => ({ balances: t.ledger.balances(d.address), frontier: t.ledger.frontier(d.address) }));
    const before = seen();
    expect(before[1]!.balances.final_height).toBe(1);
    t = t.reopen(OPTS);
    expect(seen()).toEqual(before);
  });
});

describe('LedgerStore transactions', () => {
  const entry: PendingEntry = { send_hash: 'ab'.repeat(32), source: D1.address, destination: D7.address, amount: 5n, asset: 'XE', timestamp: 1n };
  const account = (address: string, height: number): AccountState => ({
    address,
    frontier: 'cd'.repeat(32),
    height,
    lastTimestamp: 1n,
    pubKey: '',
    keyset: null,
    representative: D1.address,
    finalHeight: 0,
    balances: new Map([['XE', 7n]]),
  });
  const fail = (fn: () => void) => {
    try {
      fn();
    } catch {
      return;
    }
    throw new Error('expected a throw');
  };

  it('a rolled-back savepoint undoes its pending writes and account deletions; the outer transaction keeps its own', () => {
    const store = new LedgerStore(t.db);
    store.transaction(() => {
      store.putPending(entry);
      store.putAccount(account(D7.address, 1));
      fail(() =>
        store.transaction(() => {
          store.deletePending(entry.send_hash);
          store.deleteAccount(D7.address);
          throw new Error('inner failure');
        }),
      );
    });
    expect(store.loadPending().map((p) => p.send_hash)).toEqual([entry.send_hash]);
    // The account kept its row id: writing it again updates that one row.
    store.transaction(() => store.putAccount(account(D7.address, 2)));
    const rows = t.db.prepare(`SELECT height FROM ledger_accounts WHERE address = ?`).all(D7.address) as { height: number }[];
    expect(rows).toEqual([{ height: 2 }]);
  });

  it('a rolled-back outermost transaction writes nothing', () => {
    const store = new LedgerStore(t.db);
    fail(() =>
      store.transaction(() => {
        store.putPending(entry);
        throw new Error('failure');
      }),
    );
    expect(store.loadPending()).toEqual([]);
    store.putPending(entry); // outside a transaction: written at once
    expect(store.loadPending().map((p) => p.send_hash)).toEqual([entry.send_hash]);
  });
});

describe('schema 1 → 2', () => {
  /** Rewrite the file's ledger tables in the schema-1 layout (accounts keyed by address, chains by account). */
  function downgradeToSchema1(): void {
    t.db.exec(`
      CREATE TABLE accounts_v1 (
        address TEXT PRIMARY KEY, frontier TEXT NOT NULL, height INTEGER NOT NULL, last_ts TEXT NOT NULL,
        pub_key TEXT NOT NULL, keyset TEXT NOT NULL, representative TEXT NOT NULL, final_height INTEGER NOT NULL,
        balances TEXT NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO accounts_v1 SELECT address, frontier, height, last_ts, pub_key, keyset, representative, final_height, balances FROM ledger_accounts;
      DROP TABLE ledger_accounts;
      ALTER TABLE accounts_v1 RENAME TO ledger_accounts;
      CREATE TABLE blocks_v1 (hash TEXT PRIMARY KEY, account TEXT NOT NULL, height INTEGER NOT NULL, timestamp INTEGER NOT NULL, body TEXT NOT NULL);
      INSERT INTO blocks_v1 SELECT hash, account, height, timestamp, body FROM ledger_blocks;
      DROP TABLE ledger_blocks;
      ALTER TABLE blocks_v1 RENAME TO ledger_blocks;
      CREATE UNIQUE INDEX ledger_blocks_chain ON ledger_blocks (account, height);
      UPDATE ledger_meta SET value = '1' WHERE key = 'schema_version';
    `);
  }

  it('keeps every account, chain and pending entry, and the migrated file takes new blocks', () => {
    const s7 = c.send(D1, D7, 3000n);
    c.receive(D7, s7);
    const s8 = c.send(D7, D8, 1000n);
    const chains = [D1, D7].map((k) => t.ledger.accountChain(k.address, 0, 100));
    const balances = [D1, D7].map((k) => t.ledger.balances(k.address));
    t.close();
    t = openTestLedger(OPTS, t.path);
    downgradeToSchema1();
    t = t.reopen(OPTS);
    c = new Chains(t);

    const version = t.db.prepare(`SELECT value FROM ledger_meta WHERE key = 'schema_version'`).get() as { value: string };
    expect(Number(version.value)).toBe(LEDGER_SCHEMA_VERSION);
    expect([D1, D7].map((k) => t.ledger.accountChain(k.address, 0, 100))).toEqual(chains);
    expect([D1, D7].map((k) => t.ledger.balances(k.address))).toEqual(balances);
    expect(t.ledger.pending().map((p) => p.send_hash)).toEqual([s8.hash]);

    const r8 = c.receive(D8, s8);
    expect(t.ledger.getBlock(r8.hash)).not.toBeNull();
    expect(t.ledger.accountChain(D7.address, 0, 100).total).toBe(2);
    expect(t.ledger.accountChain(D8.address, 0, 100).blocks.map((b) => b.block.hash)).toEqual([r8.hash]);
  });

  it('refuses a file of an unknown schema version', () => {
    t.db.prepare(`UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'`).run();
    expect(() => t.reopen(OPTS)).toThrow('ledger store: unsupported schema version 99');
  });
});
