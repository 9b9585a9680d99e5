// State chain: vectors, applying blocks, KV paging, as-of governance, persistence and boot replay.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parseJson, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';
import { bytesToHex } from '../../ledger/codec/hex.js';
import { BodyShapeError } from '../../ledger/codec/block.js';
import { LedgerError } from '../../ledger/errors.js';
import { DEVNET_STATECHAIN_GENESIS, DEVNET_STATECHAIN_GENESIS_HASH } from '../../ledger/genesis/devnet.js';
import type { StatechainBlock } from '../../ledger/service.js';
import { canonicalBytes, emitStatechainBlock, statechainHash } from '../../ledger/statechain/block.js';
import { RAW_OP_VALUE, Statechain, StatechainIntegrityError } from '../../ledger/statechain/statechain.js';
import {
  DAY,
  SECOND,
  T0,
  daoBlock,
  dev,
  epochValue,
  openChain,
  openDb,
  oracleBlock,
  tempDbPath,
} from './statechain-helpers.js';

interface Vector {
  name: string;
  block: JsonValue;
  value_raw: string[];
  canonical_hex: string;
  hash: string;
}

const fixture = parseJson(readFileSync(new URL('../fixtures/net-vectors.json', import.meta.url), 'utf8')) as unknown as {
  statechain_vectors: Vector[];
};
const vectors = fixture.statechain_vectors;
/** Each vector block as wire text (compact, so each value is written exactly as its value_raw). */
const vectorText = (v: Vector): string => stringifyJson(v.block);

describe('statechain vectors', () => {
  test('there are vectors', () => {
    expect(vectors.length).toBe(4);
  });

  test.each(vectors.map((v) => [v.name, v] as const))('%s: raw values, canonical bytes, hash', (_name, v) => {
    const block = Statechain.parseBlock(vectorText(v));
    expect(block.ops.map((op) => op.value?.text ?? '')).toEqual(v.value_raw);
    expect(bytesToHex(canonicalBytes(block))).toBe(v.canonical_hex);
    expect(statechainHash(block)).toBe(v.hash);
    expect(block.hash).toBe(v.hash);
    // Emission writes values verbatim, so the block survives transit byte for byte.
    expect(emitStatechainBlock(block)).toBe(vectorText(v));
  });

  test('the embedded devnet genesis is the vector genesis', () => {
    const g = Statechain.parseBlock(DEVNET_STATECHAIN_GENESIS);
    expect(statechainHash(g)).toBe(DEVNET_STATECHAIN_GENESIS_HASH);
    expect(emitStatechainBlock(g)).toBe(DEVNET_STATECHAIN_GENESIS);
    expect(vectors[0]!.hash).toBe(DEVNET_STATECHAIN_GENESIS_HASH);
  });

  test('a value keeps its exact text: whitespace changes the hash', () => {
    const v = vectors[1]!;
    const spaced = vectorText(v).replace('{"mode":"open"}', '{ "mode": "open" }');
    const block = Statechain.parseBlock(spaced);
    expect(block.ops[0]!.value!.text).toBe('{ "mode": "open" }');
    expect(statechainHash(block)).not.toBe(v.hash);
    expect(emitStatechainBlock(block)).toContain('{ "mode": "open" }');
  });

  test('the vector blocks apply in order on a devnet chain', () => {
    const t = openChain();
    expect(t.sc.genesisHash).toBe(DEVNET_STATECHAIN_GENESIS_HASH);
    expect(t.sc.networkId).toBe('devnet');
    expect(t.sc.count()).toBe(1);
    expect(t.sc.get('epoch.0')).toBe(vectors[0]!.value_raw[7]);

    const applied: bigint[] = [];
    t.sc.onApplied((b) => applied.push(b.index));
    const expectedKv: [string, string | null][][] = [
      [['sys.representatives', '{"mode":"open"}']],
      [['epoch.1', vectors[2]!.value_raw[0]!]],
      [
        ['app.motd', '"hello devnet"'],
        ['app.old_motd', null],
      ],
    ];
    vectors.slice(1).forEach((v, i) => {
      const block = Statechain.parseBlock(vectorText(v));
      t.clock.now = block.timestamp + 5n * SECOND;
      expect(t.sc.submit(block, 'live').status).toBe('applied');
      expect(t.sc.tip().hash).toBe(v.hash);
      for (const [key, value] of expectedKv[i]!) expect(t.sc.get(key)).toBe(value);
    });
    expect(applied).toEqual([1n, 2n, 3n]);
    expect(t.sc.count()).toBe(4);
    expect(t.sc.representativesPolicy()).toEqual({ mode: 'open' });
    expect(t.sc.blockAt(2n)!.hash).toBe(vectors[2]!.hash);
    expect(emitStatechainBlock(t.sc.blockAt(2n)!)).toBe(vectorText(vectors[2]!));
    expect(t.sc.blocks(1n, 2).map((b) => b.index)).toEqual([1n, 2n]);
    expect(t.sc.blocks(9n, 10)).toEqual([]);
    expect(t.sc.daoKeyset()).toEqual({ keys: [dev(3), dev(4), dev(5)], threshold: 2 });
    t.db.close();
  });
});

describe('parsing', () => {
  test('wrong JSON types are body shape errors', () => {
    const good = JSON.parse(vectorText(vectors[3]!)) as Record<string, unknown>;
    const cases: Record<string, unknown>[] = [
      { ...good, index: '1' },
      { ...good, index: -1 },
      { ...good, timestamp: 1.5 },
      { ...good, ops: {} },
      { ...good, ops: [{ action: 'set', key: 7, value: 1 }] },
      { ...good, signatures: [{ public_key: 1, signature: 'aa' }] },
      { ...good, hash: null },
    ];
    for (const c of cases) expect(() => Statechain.parseBlock(JSON.stringify(c))).toThrow(BodyShapeError);
    expect(() => Statechain.parseBlock('{"index":')).toThrow(BodyShapeError);
    expect(() => Statechain.parseBlock('[]')).toThrow(BodyShapeError);
  });

  test('a delete op carries no value: one sent is dropped and not hashed', () => {
    const text = vectorText(vectors[3]!);
    const withValue = Statechain.parseBlock(text.replace('"key":"app.old_motd"', '"key":"app.old_motd","value":{"x":1}'));
    expect(withValue.ops[1]).toEqual({ action: 'delete', key: 'app.old_motd' });
    expect(statechainHash(withValue)).toBe(vectors[3]!.hash);
    expect(emitStatechainBlock(withValue)).toBe(text);
  });

  test('a null value on a set is kept as written, so the hash covers the text sent', () => {
    const block = Statechain.parseBlock(vectorText(vectors[1]!).replace('{"mode":"open"}', 'null'));
    expect(block.ops[0]!.value!.text).toBe('null');
    expect(bytesToHex(canonicalBytes(block))).toContain('000000046e756c6c'); // u32be(4) "null"
  });

  test('parseBlockValue takes a value parsed with the raw option', () => {
    const text = vectorText(vectors[1]!);
    const json = parseJson(text, { raw: RAW_OP_VALUE });
    expect(Statechain.parseBlockValue(json).hash).toBe(vectors[1]!.hash);
    // Without the raw option the value text is lost: refused rather than re-serialized.
    expect(() => Statechain.parseBlockValue(parseJson(text))).toThrow(BodyShapeError);
  });
});

describe('KV listing', () => {
  test('prefix scan in bytewise key order, paged with after/nextAfter', () => {
    const t = openChain();
    const keys = ['app.b', 'app.a', 'app-x', 'app.c', 'apq', 'app.a0', 'app._z'];
    t.sc.submit(daoBlock(t, keys.map((key, i) => ({ action: 'set', key, value: String(i) }))), 'live');

    const all = t.sc.kv('app', undefined, 1000);
    expect(all.entries.map(([k]) => k)).toEqual(['app-x', 'app._z', 'app.a', 'app.a0', 'app.b', 'app.c']);
    expect(all.nextAfter).toBeUndefined();
    expect(all.entries.find(([k]) => k === 'app.b')![1].text).toBe('0');

    const page1 = t.sc.kv('app.', undefined, 2);
    expect(page1.entries.map(([k]) => k)).toEqual(['app._z', 'app.a']);
    expect(page1.nextAfter).toBe('app.a');
    const page2 = t.sc.kv('app.', page1.nextAfter, 2);
    expect(page2.entries.map(([k]) => k)).toEqual(['app.a0', 'app.b']);
    expect(page2.nextAfter).toBe('app.b');
    const page3 = t.sc.kv('app.', page2.nextAfter, 2);
    expect(page3.entries.map(([k]) => k)).toEqual(['app.c']);
    expect(page3.nextAfter).toBeUndefined();
    // an exact-size last page has no nextAfter either
    expect(t.sc.kv('app.', 'app.a0', 2).nextAfter).toBeUndefined();
    // `after` need not exist
    expect(t.sc.kv('app.', 'app.a00', 10).entries.map(([k]) => k)).toEqual(['app.b', 'app.c']);
    // no prefix: every key, sys.* included
    const everything = t.sc.kv('', undefined, 1000).entries.map(([k]) => k);
    expect(everything).toEqual([...everything].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    expect(everything).toContain('sys.network_id');
    expect(t.sc.kv('zzz', undefined, 10)).toEqual({ entries: [] });
  });
});

describe('governance as of a timestamp', () => {
  test('a later block never changes the as-of view of an earlier timestamp', () => {
    const t = openChain();
    const g = t.sc.asOf(0n);
    expect(g.minters).toEqual(['7dcc39c8dfffc98df3fef5058f5aaa46a3b3113f2e306d8afbf2e367e69b63e5']);
    expect(g.timekeepers).toEqual({ keys: [dev(1)], threshold: 1 });
    expect(g.stakeDivisor).toBe(5n);
    expect(g.minPowDifficulty).toBe(0n);
    expect(g.epochCandidates(T0)).toEqual([
      { epoch: 0n, start_ns: 0n, r_effective: 2000n, payout_cap: 0n, twap_milli_usd: 0n },
    ]);
    expect(g.settled).toBe(false);

    const A = 'a'.repeat(64);
    const B = 'b'.repeat(64);
    const T1 = T0;
    const T2 = T0 + 60n * SECOND;
    t.sc.submit(daoBlock(t, [{ action: 'set', key: 'sys.minter', value: `{"keys":["${A}"]}` }], [3, 4], T1), 'live');
    const tokenomics = DEVNET_TOKENOMICS.replace('"stake_divisor":5', '"stake_divisor":7,"min_pow_difficulty":18446735277616529408');
    t.sc.submit(
      daoBlock(t, [
        { action: 'set', key: 'sys.minter', value: `{"keys":["${B}"]}` },
        { action: 'set', key: 'sys.tokenomics', value: tokenomics },
        { action: 'set', key: 'sys.timekeepers', value: `{"keys":["${dev(6)}","${dev(7)}"],"threshold":2}` },
      ], [4, 5], T2),
      'live',
    );

    expect(t.sc.asOf(T1 - 1n).minters).toEqual(['7dcc39c8dfffc98df3fef5058f5aaa46a3b3113f2e306d8afbf2e367e69b63e5']);
    expect(t.sc.asOf(T1).minters).toEqual([A]);
    expect(t.sc.asOf(T2 - 1n).minters).toEqual([A]);
    expect(t.sc.asOf(T2 - 1n).stakeDivisor).toBe(5n);
    expect(t.sc.asOf(T2 - 1n).timekeepers).toEqual({ keys: [dev(1)], threshold: 1 });
    expect(t.sc.asOf(T1).settled).toBe(true);
    expect(t.sc.asOf(T2 - 1n).settled).toBe(true);

    const now = t.sc.asOf(T2);
    expect(now.minters).toEqual([B]);
    expect(now.stakeDivisor).toBe(7n);
    expect(now.minPowDifficulty).toBe(18446735277616529408n);
    expect(now.timekeepers).toEqual({ keys: [dev(6), dev(7)], threshold: 2 });
    expect(now.settled).toBe(false);
    expect(t.sc.asOf(T2 + DAY).settled).toBe(false);
  });

  test('blocks with equal timestamps: the highest index is the as-of block', () => {
    const t = openChain();
    const A = 'a'.repeat(64);
    const B = 'b'.repeat(64);
    t.sc.submit(daoBlock(t, [{ action: 'set', key: 'sys.minter', value: `{"keys":["${A}"]}` }]), 'live');
    t.sc.submit(daoBlock(t, [{ action: 'set', key: 'sys.minter', value: `{"keys":["${B}"]}` }]), 'live');
    expect(t.sc.asOf(T0).minters).toEqual([B]);
  });

  test('epoch candidates: start_ns ≤ T, newest first, at most 4, as of the block', () => {
    const t = openChain();
    for (let n = 1n; n <= 5n; n++) {
      t.clock.now = T0 + n * SECOND;
      const start = T0 + n * DAY;
      t.sc.submit(oracleBlock(t, [{ action: 'set', key: `epoch.${n}`, value: epochValue(n, start) }]), 'live');
    }
    const view = t.sc.asOf(T0 + 10n * SECOND);
    expect(view.epochCandidates(T0 + 5n * DAY).map((e) => e.epoch)).toEqual([5n, 4n, 3n, 2n]);
    expect(view.epochCandidates(T0 + 3n * DAY - 1n).map((e) => e.epoch)).toEqual([2n, 1n, 0n]);
    expect(view.epochCandidates(T0 + 5n * DAY)[0]).toEqual({
      epoch: 5n,
      start_ns: T0 + 5n * DAY,
      r_effective: 2000n,
      payout_cap: 1200n,
      twap_milli_usd: 250n,
    });
    // as of a ledger block older than epochs 3–5, they do not exist yet
    const early = t.sc.asOf(T0 + 2n * SECOND);
    expect(early.epochCandidates(T0 + 5n * DAY).map((e) => e.epoch)).toEqual([2n, 1n, 0n]);
    expect(early.settled).toBe(true);
  });

  test('representatives policy reads the current KV', () => {
    const t = openChain();
    expect(t.sc.representativesPolicy()).toEqual({ mode: 'open' });
    const A = 'a'.repeat(64);
    t.sc.submit(daoBlock(t, [{ action: 'set', key: 'sys.representatives', value: `{"mode":"allowlist","addresses":["${A}"]}` }]), 'live');
    expect(t.sc.representativesPolicy()).toEqual({ mode: 'allowlist', addresses: [A] });
  });
});

describe('persistence', () => {
  function chainWithHistory(): ReturnType<typeof openChain> {
    const t = openChain();
    for (const v of vectors.slice(1)) {
      const block = Statechain.parseBlock(vectorText(v));
      t.clock.now = block.timestamp;
      t.sc.submit(block, 'live');
    }
    return t;
  }

  test('reopening gives the same tip, KV and as-of views', () => {
    const t = chainWithHistory();
    const kvBefore = t.sc.kv('', undefined, 1000).entries.map(([k, v]) => [k, v.text]);
    const asOfBefore = t.sc.asOf(T0 + DAY).epochCandidates(T0 + DAY);
    t.db.close();

    const again = openChain(t.path);
    expect(again.sc.tip().hash).toBe(vectors[3]!.hash);
    expect(again.sc.count()).toBe(4);
    expect(again.sc.kv('', undefined, 1000).entries.map(([k, v]) => [k, v.text])).toEqual(kvBefore);
    expect(again.sc.asOf(T0 + DAY).epochCandidates(T0 + DAY)).toEqual(asOfBefore);
    expect(again.sc.asOf(T0 + DAY).epochCandidates(T0 + DAY).map((e) => e.epoch)).toEqual([1n, 0n]);
    expect(emitStatechainBlock(again.sc.blockAt(3n)!)).toBe(vectorText(vectors[3]!));
    // and it keeps growing from there
    again.clock.now = T0 + 10n * 60n * SECOND;
    expect(again.sc.submit(daoBlock(again, [{ action: 'set', key: 'app.x', value: '1' }]), 'live').status).toBe('applied');
    again.db.close();
  });

  test('a tampered block makes reopening fail', () => {
    const t = chainWithHistory();
    t.db.prepare("UPDATE sc_blocks SET body = replace(body, 'hello devnet', 'hello attacker') WHERE idx = 3").run();
    t.db.close();
    expect(() => openChain(t.path)).toThrow(StatechainIntegrityError);
    expect(() => openChain(t.path)).toThrow('statechain store: block 3 hash does not verify');
  });

  test('a tampered signature makes reopening fail', () => {
    const t = chainWithHistory();
    const body = t.db.prepare('SELECT body FROM sc_blocks WHERE idx = 1').pluck().get() as string;
    const block = Statechain.parseBlock(body);
    block.signatures[1] = block.signatures[0]!;
    t.db.prepare('UPDATE sc_blocks SET body = ? WHERE idx = 1').run(emitStatechainBlock(block));
    t.db.close();
    expect(() => openChain(t.path)).toThrow('statechain store: block 1 signatures: duplicate signer: ed4928c628d1');
  });

  test('a tampered KV or history table, or a missing block, makes reopening fail', () => {
    const kv = chainWithHistory();
    kv.db.prepare("UPDATE sc_kv SET value = '2' WHERE key = 'sys.phase'").run();
    kv.db.close();
    expect(() => openChain(kv.path)).toThrow('statechain store: KV does not match the stored blocks');

    const history = chainWithHistory();
    history.db.prepare("UPDATE sc_history SET value = '\"x\"' WHERE key = 'app.motd'").run();
    history.db.close();
    expect(() => openChain(history.path)).toThrow('statechain store: value history does not match the stored blocks');

    const gap = chainWithHistory();
    gap.db.prepare('DELETE FROM sc_blocks WHERE idx = 2').run();
    gap.db.close();
    expect(() => openChain(gap.path)).toThrow('statechain store: expected block 2, found 3');
  });

  test('a store of another genesis is refused', () => {
    const t = openChain();
    t.db.close();
    const other = otherGenesis();
    expect(() => openChain(t.path, other.text)).toThrow(
      `statechain store: holds genesis ${DEVNET_STATECHAIN_GENESIS_HASH}, expected ${other.hash}`,
    );
    // the other genesis itself opens fine on an empty store
    const fresh = openChain(tempDbPath(), other.text);
    expect(fresh.sc.networkId).toBe('othernet');
    expect(fresh.sc.genesisHash).toBe(other.hash);
    fresh.db.close();
  });

  test('an invalid genesis document is refused', () => {
    const g = Statechain.parseBlock(DEVNET_STATECHAIN_GENESIS);
    const noNetwork = { ...g, ops: g.ops.filter((op) => op.key !== 'sys.network_id') };
    noNetwork.hash = statechainHash(noNetwork);
    const db = openDb(tempDbPath());
    expect(() => new Statechain(db, emitStatechainBlock(noNetwork), { now: () => T0 })).toThrow(
      'genesis: sys.network_id is missing',
    );
    const badHash = DEVNET_STATECHAIN_GENESIS.replace(DEVNET_STATECHAIN_GENESIS_HASH, 'f'.repeat(64));
    expect(() => new Statechain(db, badHash, { now: () => T0 })).toThrow(
      `hash mismatch: got ${'f'.repeat(64)}, want ${DEVNET_STATECHAIN_GENESIS_HASH}`,
    );
    const lowDao = DEVNET_STATECHAIN_GENESIS.replace('"threshold":2', '"threshold":1');
    const lowDaoBlock = Statechain.parseBlock(lowDao);
    lowDaoBlock.hash = statechainHash(lowDaoBlock);
    expect(() => new Statechain(db, emitStatechainBlock(lowDaoBlock), { now: () => T0 })).toThrow(
      'op key "sys.dao_keyset": threshold must be at least 2',
    );
    db.close();
  });

  test('a write lock held elsewhere is a retryable storage conflict that changes nothing', () => {
    const t = openChain();
    const other = openDb(t.path);
    t.db.pragma('busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    const block = daoBlock(t, [{ action: 'set', key: 'app.x', value: '1' }]);
    let err: unknown;
    try {
      t.sc.submit(block, 'live');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('storage');
    expect((err as LedgerError).message).toMatch(/^storage conflict: /);
    expect(t.sc.count()).toBe(1);
    expect(t.sc.get('app.x')).toBeNull();
    other.exec('ROLLBACK');
    expect(t.sc.submit(block, 'live').status).toBe('applied');
    other.close();
    t.db.close();
  });

  test('blocks are readable through a second connection (WAL file on disk)', () => {
    const t = chainWithHistory();
    const reader = openDb(t.path);
    expect(reader.prepare('SELECT count(*) FROM sc_blocks').pluck().get()).toBe(4);
    expect(reader.prepare("SELECT value FROM sc_kv WHERE key = 'app.motd'").pluck().get()).toBe('"hello devnet"');
    expect(reader.prepare("SELECT count(*) FROM sc_history WHERE key = 'app.old_motd' AND value IS NULL").pluck().get()).toBe(1);
    reader.close();
    t.db.close();
  });
});

const DEVNET_TOKENOMICS = vectors[0]!.value_raw[6]!;

function otherGenesis(): { text: string; hash: string } {
  const g: StatechainBlock = Statechain.parseBlock(DEVNET_STATECHAIN_GENESIS.replace('"devnet"', '"othernet"'));
  g.hash = statechainHash(g);
  return { text: emitStatechainBlock(g), hash: g.hash };
}
