// The store's page-saving layout (ledger/store/schema.ts): accounts numbered by the store, chains
// keyed by that number, account rows, pending entries and locks written at the end of the outermost
// transaction, the hash index written in sorted runs — and the migration of schema-1 and schema-2
// files to it.
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
const fail = (fn: () => void) => {
  try {
    fn();
  } catch {
    return;
  }
  throw new Error('expected a throw');
};

/** The `column` value of every row the `events` write to `table` from now on (temp triggers record them). */
function recordWrites(table: string, column: string, events: ('INSERT' | 'UPDATE')[]): () => string[] {
  const log = `${table}_writes`;
  t.db.exec(`CREATE TEMP TABLE ${log} (value TEXT)`);
  for (const e of events) {
    t.db.exec(`CREATE TEMP TRIGGER ${log}_${e.toLowerCase()} AFTER ${e} ON ${table} BEGIN INSERT INTO ${log} VALUES (new.${column}); END`);
  }
  return () => (t.db.prepare(`SELECT value FROM ${log}`).all() as { value: string }[]).map((r) => r.value);
}

describe('pending entries in a group commit', () => {
  it('a send received in the same batch never reaches the table; one left unreceived does, and survives a restart', () => {
    const inserted = recordWrites('ledger_pending', 'send_hash', ['INSERT']);
    const [s7, s8] = sends([D7.address, D8.address], 1000n);
    const results = t.ledger.submitMany([s7!, openingReceive(D7, s7!), s8!]);
    expect(results.every((r) => 'status' in r && r.status === 'applied')).toBe(true);

    expect(inserted()).toEqual([s8!.hash]);
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
    const written = recordWrites('ledger_accounts', 'address', ['INSERT', 'UPDATE']);
    const [s7, s8] = sends([D7.address, D8.address], 1000n);
    const results = t.ledger.submitMany([s7!, s8!, openingReceive(D7, s7!)]);
    expect(results.every((r) => 'status' in r && r.status === 'applied')).toBe(true);

    expect(written().sort()).toEqual([D1.address, D7.address].sort());
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

describe('blocks by hash (the hash index written in sorted runs)', () => {
  const indexed = () => new Set((t.db.prepare(`SELECT hash FROM ledger_block_hashes`).all() as { hash: string }[]).map((r) => r.hash));
  /** Ten dev1 sends stored one per commit at the heights after dev1's chain (the store checks nothing). */
  const storeTen = (store: LedgerStore): { block: Block; height: number }[] => {
    const base = t.ledger.accountChain(D1.address).total;
    const blocks = sends(Array.from({ length: 10 }, () => D7.address), 5n).map((block, i) => ({ block, height: base + 1 + i }));
    for (const { block, height } of blocks) store.transaction(() => store.insertBlock(block, height));
    return blocks;
  };

  it('finds every block whether its hash is in the index or still in memory, also after a reopen', () => {
    const blocks = storeTen(new LedgerStore(t.db, { hashRun: 4 }));
    const inIndex = blocks.filter(({ block }) => indexed().has(block.hash));
    // Runs of 4: most hashes are in the index, the last few are not yet.
    expect(inIndex.length).toBeGreaterThanOrEqual(7);
    expect(inIndex.length).toBeLessThan(10);
    expect(indexed().size).toBe(Number((t.db.prepare(`SELECT value FROM ledger_meta WHERE key = 'block_hashes_upto'`).get() as { value: string }).value));

    // A new store has no cached block: every read goes through the index or its memory of newer hashes.
    const fresh = new LedgerStore(t.db, { hashRun: 4 });
    for (const { block, height } of blocks) {
      expect(fresh.hasBlock(block.hash)).toBe(true);
      expect(fresh.position(block.hash)).toEqual({ account: D1.address, height });
      expect(fresh.block(block.hash)?.block).toEqual(block);
    }
    expect(fresh.hasBlock('ab'.repeat(32))).toBe(false);
    expect(fresh.block('ab'.repeat(32))).toBeUndefined();
  });

  it('deletes a block whose hash is in the index and one whose hash is in memory', () => {
    const store = new LedgerStore(t.db, { hashRun: 4 });
    const blocks = storeTen(store);
    const first = blocks[0]!.block;
    const last = blocks[9]!.block;
    expect([indexed().has(first.hash), indexed().has(last.hash)]).toEqual([true, false]);
    store.transaction(() => {
      store.deleteBlock(first.hash);
      store.deleteBlock(last.hash);
    });
    expect(indexed().has(first.hash)).toBe(false);
    for (const s of [store, new LedgerStore(t.db, { hashRun: 4 })]) {
      expect([s.hasBlock(first.hash), s.hasBlock(last.hash), s.hasBlock(blocks[5]!.block.hash)]).toEqual([false, false, true]);
    }
  });

  it('a rolled-back transaction leaves none of its blocks findable', () => {
    const store = new LedgerStore(t.db, { hashRun: 4 });
    const before = indexed().size;
    const [send] = sends([D7.address], 5n);
    const height = t.ledger.accountChain(D1.address).total + 1;
    fail(() =>
      store.transaction(() => {
        store.insertBlock(send!, height);
        throw new Error('failure');
      }),
    );
    expect(store.hasBlock(send!.hash)).toBe(false);
    expect(store.position(send!.hash)).toBeUndefined();
    expect(indexed().size).toBe(before);
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

  it('a unit without a savepoint whose block row fails undoes its deferred rows; the transaction keeps the rest', () => {
    const store = new LedgerStore(t.db);
    const height = t.ledger.accountChain(D1.address).total;
    const [send] = sends([D7.address], 5n);
    const other: PendingEntry = { ...entry, send_hash: 'ef'.repeat(32) };
    store.transaction(() => {
      store.withoutSavepoint(() => store.putPending(other));
      fail(() =>
        store.withoutSavepoint(() => {
          store.putPending(entry);
          store.putAccount(account(D7.address, 1));
          // dev1's chain already has a block at this height: the row is refused (UNIQUE account, height).
          store.insertBlock(send!, height);
        }),
      );
    });
    expect(store.loadPending().map((p) => p.send_hash)).toEqual([other.send_hash]);
    expect(t.db.prepare(`SELECT address FROM ledger_accounts WHERE address = ?`).all(D7.address)).toEqual([]);
    expect(store.hasBlock(send!.hash)).toBe(false);
  });

  it('a lock taken and removed in one transaction never reaches the table; a rolled-back savepoint keeps the lock it removed', () => {
    const store = new LedgerStore(t.db);
    const locks = () => t.db.prepare(`SELECT account, previous, hash FROM ledger_commit_locks`).all();
    const [opening, later] = ['0', 'ab'.repeat(32)];
    const hash = 'cd'.repeat(32);
    store.transaction(() => {
      store.putLock(D7.address, opening, hash);
      store.deleteLock(D7.address, opening);
      store.putLock(D7.address, later, hash);
      fail(() =>
        store.transaction(() => {
          store.deleteLock(D7.address, later);
          throw new Error('inner failure');
        }),
      );
    });
    expect(locks()).toEqual([{ account: D7.address, previous: later, hash }]);
    // Taken in an earlier transaction: the row is deleted.
    store.transaction(() => store.deleteLock(D7.address, later));
    expect(locks()).toEqual([]);
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

describe('schema migrations', () => {
  /** The blocks table before schema 3: keyed by hash, no row id column. */
  const SCHEMA_1_BLOCK_COLUMNS = ['hash TEXT PRIMARY KEY', 'account TEXT NOT NULL', 'height INTEGER NOT NULL', 'timestamp INTEGER NOT NULL', 'body TEXT NOT NULL'];

  /** Rewrite the file's blocks table in an older schema's layout (no hash index) and mark the file as that version. */
  function rewriteBlocksAs(version: number, columns: string[], chainKey: string): void {
    const names = columns.map((c) => c.split(' ')[0]).join(', ');
    t.db.exec(`
      CREATE TABLE blocks_old (${columns.join(', ')});
      INSERT INTO blocks_old SELECT ${names} FROM ledger_blocks ORDER BY id;
      DROP TABLE ledger_blocks;
      ALTER TABLE blocks_old RENAME TO ledger_blocks;
      CREATE UNIQUE INDEX ledger_blocks_chain ON ledger_blocks (${chainKey});
      DROP TABLE ledger_block_hashes;
      DELETE FROM ledger_meta WHERE key = 'block_hashes_upto';
      UPDATE ledger_meta SET value = '${version}' WHERE key = 'schema_version';
    `);
  }

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
    `);
    rewriteBlocksAs(1, SCHEMA_1_BLOCK_COLUMNS, 'account, height');
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

  it('from schema 2 (blocks keyed by hash): every block is found by hash and the file takes new blocks', () => {
    const s7 = c.send(D1, D7, 3000n);
    const r7 = c.receive(D7, s7);
    const hashes = [D1, D7].flatMap((k) => t.ledger.accountChain(k.address, 0, 100).blocks.map((b) => b.block.hash));
    t.close();
    t = openTestLedger(OPTS, t.path);
    rewriteBlocksAs(2, [...SCHEMA_1_BLOCK_COLUMNS, 'account_id INTEGER NOT NULL'], 'account_id, height');
    t = t.reopen(OPTS);
    c = new Chains(t);

    const count = (t.db.prepare(`SELECT COUNT(*) AS n FROM ledger_blocks`).get() as { n: number }).n;
    expect((t.db.prepare(`SELECT COUNT(*) AS n FROM ledger_block_hashes`).get() as { n: number }).n).toBe(count);
    for (const h of hashes) expect(t.ledger.getBlock(h)?.block.hash).toBe(h);
    const back = c.send(D7, D1, 1000n);
    expect(t.ledger.getBlock(back.hash)?.block.previous).toBe(r7.hash);
  });

  it('refuses a file of an unknown schema version', () => {
    t.db.prepare(`UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'`).run();
    expect(() => t.reopen(OPTS)).toThrow('ledger store: unsupported schema version 99');
  });
});
