// State chain rejections (statechain.md §3–§7): every rule with its exact message and retryability.
import { beforeEach, describe, expect, test } from 'vitest';
import { LedgerError } from '../../ledger/errors.js';
import type { IntakePath } from '../../ledger/types.js';
import type { StatechainBlock } from '../../ledger/service.js';
import { RawJson } from '../../ledger/codec/json.js';
import { emitStatechainBlock } from '../../ledger/statechain/block.js';
import {
  DAY,
  SECOND,
  T0,
  buildBlock,
  daoBlock,
  dev,
  epochValue,
  openChain,
  oracleBlock,
  raw,
  reseal,
  sign,
  viaText,
  type OpSpec,
  type TestChain,
} from './statechain-helpers.js';

let t: TestChain;
beforeEach(() => {
  t = openChain();
});

function rejection(block: StatechainBlock, path: IntakePath = 'live'): LedgerError {
  const tipBefore = t.sc.tip().hash;
  const kvBefore = t.sc.kv('', undefined, 1000);
  try {
    t.sc.submit(block, path);
  } catch (e) {
    expect(e).toBeInstanceOf(LedgerError);
    // nothing changed
    expect(t.sc.tip().hash).toBe(tipBefore);
    expect(t.sc.kv('', undefined, 1000)).toEqual(kvBefore);
    return e as LedgerError;
  }
  throw new Error('block was accepted');
}

function expectRejected(block: StatechainBlock, message: string, opts: { retryable?: boolean; path?: IntakePath } = {}): void {
  const err = rejection(block, opts.path);
  expect(err.message).toBe(message);
  expect(err.retryable()).toBe(opts.retryable ?? false);
  expect(err.code).toBe(opts.retryable ? 'frontier' : 'invalid');
}

const set = (key: string, value: string): OpSpec => ({ action: 'set', key, value });
const del = (key: string): OpSpec => ({ action: 'delete', key });

/** A DAO block with the given ops, through the wire form. */
const dao = (...ops: OpSpec[]): StatechainBlock => viaText(daoBlock(t, ops));

describe('chain position and hash (§4)', () => {
  test('a valid block applies; resubmitting it is a duplicate no-op, even out of the live window', () => {
    const block = dao(set('app.x', '1'));
    const seen: bigint[] = [];
    t.sc.onApplied((b) => seen.push(b.index));
    expect(t.sc.submit(block, 'live').status).toBe('applied');
    t.clock.now = T0 + 10n * DAY;
    const again = t.sc.submit(viaText(block), 'live');
    expect(again.status).toBe('duplicate');
    expect(again.block.hash).toBe(block.hash);
    expect(seen).toEqual([1n]);
    expect(t.sc.count()).toBe(2);
    // the genesis too is a duplicate
    expect(t.sc.submit(t.sc.blockAt(0n)!, 'sync').status).toBe('duplicate');
  });

  test('unsubscribed listeners are not called', () => {
    const seen: bigint[] = [];
    const off = t.sc.onApplied((b) => seen.push(b.index));
    off();
    t.sc.submit(dao(set('app.x', '1')), 'live');
    expect(seen).toEqual([]);
  });

  test('hex shapes', () => {
    const b = dao(set('app.x', '1'));
    expectRejected({ ...b, hash: b.hash.toUpperCase() }, 'invalid hash: must be 64 lowercase hex characters');
    expectRejected({ ...b, prev_hash: 'abc' }, 'invalid prev_hash: must be 64 lowercase hex characters');
    const badKey = { ...b, signatures: [b.signatures[0]!, { ...b.signatures[1]!, public_key: 'zz' }] };
    expectRejected(badKey, 'invalid signatures[1].public_key: must be 64 lowercase hex characters');
    const badSig = { ...b, signatures: [{ ...b.signatures[0]!, signature: b.signatures[0]!.signature.slice(2) }] };
    expectRejected(badSig, 'invalid signatures[0].signature: must be 128 lowercase hex characters');
  });

  test('hash mismatch', () => {
    const b = dao(set('app.x', '1'));
    const tampered = viaText(b);
    tampered.ops[0]!.value = raw('2');
    const want = buildBlock(t.sc.tip(), [set('app.x', '2')], [], t.clock.now).hash;
    expectRejected(tampered, `hash mismatch: got ${b.hash}, want ${want}`);
  });

  test('fork', () => {
    const first = dao(set('app.x', '1'));
    t.sc.submit(first, 'live');
    const other = buildBlock({ index: 0n, hash: t.sc.blockAt(0n)!.hash }, [set('app.x', '2')], [3, 4], T0);
    expectRejected(other, `fork detected at index 1: existing ${first.hash}, incoming ${other.hash}`);
  });

  test('gap is retryable', () => {
    const b = buildBlock({ index: 2n, hash: 'a'.repeat(64) }, [set('app.x', '1')], [3, 4], T0);
    expectRejected(b, 'expected index 1, got 3: statechain gap', { retryable: true });
  });

  test('prev_hash mismatch is retryable', () => {
    const b = buildBlock({ index: 0n, hash: 'a'.repeat(64) }, [set('app.x', '1')], [3, 4], T0);
    expectRejected(b, `prev_hash mismatch: expected ${t.sc.tip().hash}, got ${'a'.repeat(64)}`, { retryable: true });
  });

  test('timestamp before previous', () => {
    t.sc.submit(dao(set('app.x', '1')), 'live');
    const b = daoBlock(t, [set('app.x', '2')], [3, 4], T0 - 1n);
    expectRejected(b, `timestamp ${T0 - 1n} is before previous ${T0}`);
    expectRejected(b, `timestamp ${T0 - 1n} is before previous ${T0}`, { path: 'sync' });
  });

  test('live window ±1 h; sync skips it', () => {
    const ahead = daoBlock(t, [set('app.x', '1')], [3, 4], T0 + 3600n * SECOND + 1n);
    expectRejected(ahead, 'statechain block timestamp out of range: delta=1h0m0.000000001s');
    const behind = daoBlock(t, [set('app.x', '1')], [3, 4], T0 - 2n * 3600n * SECOND);
    expectRejected(behind, 'statechain block timestamp out of range: delta=-2h0m0s');
    const edge = daoBlock(t, [set('app.x', '1')], [3, 4], T0 + 3600n * SECOND);
    expect(t.sc.submit(edge, 'live').status).toBe('applied');
    const far = daoBlock(t, [set('app.y', '1')], [3, 4], T0 + 30n * DAY);
    expect(t.sc.submit(far, 'sync').status).toBe('applied');
  });

  test('no ops', () => {
    expectRejected(dao(), 'block has no ops');
  });

  test('block size limit', () => {
    const big = `"${'a'.repeat(60_000)}"`;
    const b = dao(set('app.a', big), set('app.b', big), set('app.c', big), set('app.d', big), set('app.e', big));
    const size = Buffer.byteLength(emitStatechainBlock(b));
    expect(size).toBeGreaterThan(262_144);
    expectRejected(b, `block size ${size} exceeds limit 262144`);
  });
});

describe('op and key rules (§5)', () => {
  test('key rules name the op by position', () => {
    expectRejected(dao(set('app.ok', '1'), set('', '1')), 'op 1: key is empty');
    expectRejected(dao(set('a'.repeat(129), '1')), 'op 0: key exceeds 128 characters');
    expect(t.sc.submit(dao(set('a'.repeat(128), '1')), 'live').status).toBe('applied');
    const invalidChars = 'op 0: key contains invalid characters (must be [a-z0-9_.-])';
    expectRejected(dao(set('App.x', '1')), invalidChars);
    expectRejected(dao(set('app/x', '1')), invalidChars);
    expectRejected(dao(set('app x', '1')), invalidChars);
    expectRejected(dao(set('app.é', '1')), invalidChars);
    expectRejected(dao(set('.', '1')), 'op 0: key must not be a dot segment');
    expectRejected(dao(del('..')), 'op 0: key must not be a dot segment');
  });

  test('unknown action: quoted only when it looks like a name', () => {
    expectRejected(dao({ action: 'frob', key: 'app.x', value: '1' }), 'op key "app.x": unknown action "frob"');
    expectRejected(dao({ action: 'Frob!', key: 'app.x', value: '1' }), 'op key "app.x": unknown action');
    // key rules come first
    expectRejected(dao({ action: 'frob', key: 'A', value: '1' }), 'op 0: key contains invalid characters (must be [a-z0-9_.-])');
  });

  test('set must have a value; a JSON null counts as absent', () => {
    expectRejected(dao({ action: 'set', key: 'app.x' }), 'op key "app.x": set op must have a value');
    expectRejected(dao(set('app.x', 'null')), 'op key "app.x": set op must have a value');
  });

  test('value size, validity, duplicate keys, depth', () => {
    expectRejected(dao(set('app.x', `"${'a'.repeat(65_535)}"`)), 'op key "app.x": value exceeds 65536 bytes');
    expect(t.sc.submit(dao(set('app.x', `"${'a'.repeat(65_534)}"`)), 'live').status).toBe('applied');

    // Text that is not one JSON value can only come from a block built in code: check it anyway.
    for (const bad of ['{bad', '1,2', ' 1']) {
      const b = daoBlock(t, [set('app.y', bad)]);
      expect(b.ops[0]!.value).toBeInstanceOf(RawJson);
      expectRejected(b, 'op key "app.y": value is not valid JSON');
    }
    expectRejected(dao(set('app.y', '{"a":1,"b":{"c":1,"c":2}}')), 'op key "app.y": value has a duplicate object key');
    const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    expectRejected(dao(set('app.y', nest(33))), 'op key "app.y": value nests deeper than 32 levels');
    expect(t.sc.submit(dao(set('app.y', nest(32))), 'live').status).toBe('applied');
  });

  test('sys.* keys are never deleted; other keys are', () => {
    expectRejected(dao(del('sys.phase')), 'op key "sys.phase": cannot delete sys.* keys');
    expectRejected(dao(del('sys.future_thing')), 'op key "sys.future_thing": cannot delete sys.* keys');
    t.sc.submit(dao(set('app.x', '1')), 'live');
    t.sc.submit(dao(del('app.x'), del('app.never_set')), 'live');
    expect(t.sc.get('app.x')).toBeNull();
  });

  test('unknown sys.* keys take any valid JSON', () => {
    expect(t.sc.submit(dao(set('sys.future_thing', '{"x":[1,2.5,"y"]}')), 'live').status).toBe('applied');
  });
});

describe('system key schemas and transitions (§6, §7)', () => {
  const keys3 = `"${dev(3)}","${dev(4)}","${dev(5)}"`;

  test('sys.dao_keyset', () => {
    expectRejected(dao(set('sys.dao_keyset', `{"keys":[${keys3}],"threshold":1}`)), 'op key "sys.dao_keyset": threshold must be at least 2');
    expectRejected(dao(set('sys.dao_keyset', `{"keys":[${keys3}],"threshold":4}`)), 'op key "sys.dao_keyset": threshold must not exceed the number of keys');
    expectRejected(dao(set('sys.dao_keyset', `{"keys":["${dev(3)}"],"threshold":2}`)), 'op key "sys.dao_keyset": keys must have at least 2 entries');
    expectRejected(dao(set('sys.dao_keyset', `{"keys":["${dev(3)}","${dev(3)}"],"threshold":2}`)), 'op key "sys.dao_keyset": keys entries must be unique');
    expectRejected(dao(set('sys.dao_keyset', `{"keys":["${dev(3).toUpperCase()}","${dev(4)}"],"threshold":2}`)), 'op key "sys.dao_keyset": keys entries must be 64 lowercase hex characters');
    expectRejected(dao(set('sys.dao_keyset', `{"keys":[${keys3}],"threshold":"2"}`)), 'op key "sys.dao_keyset": threshold must be an integer literal');
    expectRejected(dao(set('sys.dao_keyset', `{"keys":[${keys3}],"threshold":2,"extra":1}`)), 'op key "sys.dao_keyset": unknown field');
    expectRejected(dao(set('sys.dao_keyset', '[1]')), 'op key "sys.dao_keyset": value must be an object');
  });

  test('a new DAO keyset signs the blocks after it', () => {
    t.sc.submit(dao(set('sys.dao_keyset', `{"keys":["${dev(6)}","${dev(7)}"],"threshold":2}`)), 'live');
    const old = daoBlock(t, [set('app.x', '1')], [3, 4]);
    expectRejected(old, `signer ${dev(3).slice(0, 12)} not in keyset`);
    expect(t.sc.submit(daoBlock(t, [set('app.x', '1')], [6, 7]), 'live').status).toBe('applied');
    expect(t.sc.daoKeyset()).toEqual({ keys: [dev(6), dev(7)], threshold: 2 });
  });

  test('sys.network_id is fixed by the genesis', () => {
    expectRejected(dao(set('sys.network_id', '"devnet"')), 'op key "sys.network_id": network id is fixed by the genesis');
  });

  test('sys.phase may not decrease', () => {
    expectRejected(dao(set('sys.phase', '3')), 'op key "sys.phase": phase must be 1 or 2');
    expectRejected(dao(set('sys.phase', '2.0')), 'op key "sys.phase": phase must be an integer literal');
    t.sc.submit(dao(set('sys.phase', '2')), 'live');
    expectRejected(dao(set('sys.phase', '1')), 'op key "sys.phase": phase may not decrease: 2 -> 1');
    // within one block, later ops see earlier ones
    const fresh = openChain();
    t = fresh;
    expectRejected(dao(set('sys.phase', '2'), set('sys.phase', '1')), 'op key "sys.phase": phase may not decrease: 2 -> 1');
  });

  test('sys.tokenomics: strict fields, integer literals, relations', () => {
    const base = t.sc.get('sys.tokenomics')!;
    const edit = (from: string, to: string): StatechainBlock => dao(set('sys.tokenomics', base.replace(from, to)));
    expectRejected(edit('"stake_divisor":5', '"stake_divisor":5,"bonus":1'), 'op key "sys.tokenomics": unknown field');
    expectRejected(edit('"r_init":2000', '"r_init":2000.0'), 'op key "sys.tokenomics": r_init must be an integer literal');
    expectRejected(edit('"r_init":2000', '"r_init":2e3'), 'op key "sys.tokenomics": r_init must be an integer literal');
    expectRejected(edit('"r_init":2000', '"r_init":"2000"'), 'op key "sys.tokenomics": r_init must be an integer literal');
    expectRejected(edit('"r_init":2000,', ''), 'op key "sys.tokenomics": r_init is required');
    expectRejected(edit('"stake_divisor":5', '"stake_divisor":0'), 'op key "sys.tokenomics": stake_divisor must be within [1, 1000000]');
    expectRejected(edit('"r_init":2000', '"r_init":100'), 'op key "sys.tokenomics": r_init must exceed r_floor');
    expectRejected(edit('"price_tier_2":1010', '"price_tier_2":400'), 'op key "sys.tokenomics": price tiers must increase: price_tier_1 < price_tier_2 < price_tier_3');
    expectRejected(edit('"r_collusion_factor_milli":950', '"r_collusion_factor_milli":1000'), 'op key "sys.tokenomics": r_collusion_factor_milli must be between 1 and 999');
    expectRejected(edit('"hermite_floor_milli":1120', '"hermite_floor_milli":1550'), 'op key "sys.tokenomics": hermite_ceiling_milli must exceed hermite_floor_milli');
    expectRejected(
      edit('"stake_divisor":5', '"stake_divisor":5,"min_pow_difficulty":18446744073709551616'),
      'op key "sys.tokenomics": min_pow_difficulty is out of range',
    );
    // stake_divisor and min_pow_difficulty are optional
    expect(t.sc.submit(edit(',"stake_divisor":5', ''), 'live').status).toBe('applied');
    expect(t.sc.asOf(T0).stakeDivisor).toBe(5n);
  });

  test('sys.oracle: prefix fixed once set, shape', () => {
    const oracle = (prefix: string, threshold = 1): StatechainBlock =>
      dao(set('sys.oracle', `{"keys":["${dev(2)}"],"threshold":${threshold},"allowed_prefix":"${prefix}"}`));
    expectRejected(oracle('price.'), 'op key "sys.oracle": allowed_prefix is fixed once set');
    const shapeMsg = 'op key "sys.oracle": allowed_prefix must be 1-64 characters of [a-z0-9_.-], end with "." and not start with "sys."';
    expectRejected(oracle('epoch'), shapeMsg);
    expectRejected(oracle('sys.epoch.'), shapeMsg);
    expectRejected(oracle('epoch.', 2), 'op key "sys.oracle": threshold must not exceed the number of keys');
    // keys and threshold may change: dev2 becomes the oracle
    t.sc.submit(oracle('epoch.'), 'live');
    const byDev1 = oracleBlock(t, [set('epoch.1', epochValue(1n, T0))], [1]);
    expectRejected(byDev1, `signer ${dev(1).slice(0, 12)} not in oracle keyset`);
    expect(t.sc.submit(oracleBlock(t, [set('epoch.1', epochValue(1n, T0))], [2]), 'live').status).toBe('applied');
  });

  test('sys.minter, sys.timekeepers, sys.representatives, sys.min_protocol_version, sys.activations', () => {
    expectRejected(dao(set('sys.minter', '{"keys":[]}')), 'op key "sys.minter": keys must have at least 1 entry');
    expectRejected(dao(set('sys.timekeepers', `{"keys":["${dev(1)}"],"threshold":0}`)), 'op key "sys.timekeepers": threshold must be at least 1');
    expectRejected(dao(set('sys.representatives', '{"mode":"closed"}')), 'op key "sys.representatives": mode must be "open" or "allowlist"');
    expectRejected(dao(set('sys.representatives', `{"mode":"open","addresses":["${'a'.repeat(64)}"]}`)), 'op key "sys.representatives": unknown field');
    expectRejected(dao(set('sys.representatives', '{"mode":"allowlist","addresses":[]}')), 'op key "sys.representatives": addresses must have at least 1 entry');
    expectRejected(dao(set('sys.min_protocol_version', '"1.0"')), 'op key "sys.min_protocol_version": version must be "M.m.p"');
    t.sc.submit(dao(set('sys.min_protocol_version', '"1.2.0"')), 'live');
    expectRejected(dao(set('sys.min_protocol_version', '"1.1.9"')), 'op key "sys.min_protocol_version": min_protocol_version may not decrease');

    const act = (features: string): StatechainBlock => dao(set('sys.activations', `{"features":{${features}}}`));
    expectRejected(act('"Bad":{"at_index":5,"not_before_ns":0}'), 'op key "sys.activations": feature names must match ^[a-z][a-z0-9_]{0,31}$');
    expectRejected(act('"noop":{"at_index":0,"not_before_ns":0}'), 'op key "sys.activations": feature: at least one of at_index and not_before_ns must be non-zero');
    expectRejected(act('"noop":{"at_index":0,"not_before_ns":1800000000}'), 'op key "sys.activations": feature: not_before_ns must be 0 or at least 1600000000000000000');
    expectRejected(act('"noop":{"at_index":1,"not_before_ns":0}'), 'op key "sys.activations": a new or changed trigger must lie in the future');
    t.sc.submit(act('"noop":{"at_index":4,"not_before_ns":0}'), 'live');
    expectRejected(act('"other":{"at_index":9,"not_before_ns":0}'), 'op key "sys.activations": features may not be removed');
    t.sc.submit(dao(set('app.a', '1')), 'live');
    t.sc.submit(dao(set('app.b', '1')), 'live'); // tip index 4: noop is active now
    expectRejected(act('"noop":{"at_index":9,"not_before_ns":0}'), 'op key "sys.activations": an active feature is frozen');
  });
});

describe('signature authority (§3)', () => {
  test('DAO threshold checks in order', () => {
    const ops = [set('app.x', '1')];
    expectRejected(daoBlock(t, ops, []), 'no signatures');
    const dup = daoBlock(t, ops, [3, 3]);
    expectRejected(dup, `duplicate signer: ${dev(3).slice(0, 12)}`);
    expectRejected(daoBlock(t, ops, [3, 6]), `signer ${dev(6).slice(0, 12)} not in keyset`);
    const badSig = daoBlock(t, ops, [3, 4]);
    badSig.signatures[1] = { public_key: dev(4), signature: sign('0'.repeat(64), 4).signature };
    expectRejected(badSig, `sig from ${dev(4).slice(0, 12)}: signature verification failed`);
    expectRejected(daoBlock(t, ops, [5]), 'insufficient signatures: got 1, need 2');
    expect(t.sc.submit(daoBlock(t, ops, [3, 4, 5]), 'live').status).toBe('applied');
  });

  test('mixing oracle-prefix and other ops is a DAO block that may not touch the prefix', () => {
    const mixed = oracleBlock(t, [set('app.x', '1'), set('epoch.1', epochValue(1n, T0))], [3, 4]);
    expectRejected(mixed, 'DAO block cannot write to oracle prefix "epoch." (key: epoch.1)');
  });

  test('oracle keys are write-once, set-only, and signed by the oracle', () => {
    expectRejected(oracleBlock(t, [set('epoch.0', epochValue(0n, T0))]), 'epoch key "epoch.0" already exists (write-once)');
    expectRejected(oracleBlock(t, [del('epoch.0')]), 'oracle block may only set keys');
    expectRejected(
      oracleBlock(t, [set('epoch.1', epochValue(1n, T0)), set('epoch.1', epochValue(1n, T0))]),
      'epoch key "epoch.1" already exists (write-once)',
    );
    expectRejected(oracleBlock(t, [set('epoch.1', epochValue(1n, T0))], [3, 4]), `signer ${dev(3).slice(0, 12)} not in oracle keyset`);
    expectRejected(oracleBlock(t, [set('epoch.1', epochValue(1n, T0))], []), 'no signatures');
    expect(t.sc.submit(viaText(oracleBlock(t, [set('epoch.1', epochValue(1n, T0))])), 'live').status).toBe('applied');
    expectRejected(oracleBlock(t, [set('epoch.1', epochValue(1n, T0 + DAY))]), 'epoch key "epoch.1" already exists (write-once)');
    // the DAO cannot overwrite it either: alone it is an oracle block, mixed it is refused
    expectRejected(dao(set('epoch.1', epochValue(1n, T0))), 'epoch key "epoch.1" already exists (write-once)');
    expectRejected(dao(set('app.x', '1'), set('epoch.1', epochValue(1n, T0))), 'DAO block cannot write to oracle prefix "epoch." (key: epoch.1)');
  });

  test('epoch validation (§7.3)', () => {
    const bad = (overrides: Record<string, unknown>, key = 'epoch.1'): StatechainBlock =>
      oracleBlock(t, [set(key, epochValue(1n, T0, overrides))]);
    const pre = 'op key "epoch.1": invalid epoch: ';
    expectRejected(bad({}, 'epoch.2'), 'op key "epoch.2": invalid epoch: epoch key must be "epoch.1"');
    expectRejected(bad({ end_ns: T0 }), `${pre}end_ns must be after start_ns`);
    expectRejected(bad({ phase: 2n, s_milli: 300n }), `${pre}phase must equal the current sys.phase (1)`);
    expectRejected(bad({ payout_cap: 1000n }), `${pre}payout_cap must be 0 or within [1120, 1550]`);
    expectRejected(bad({ s_milli: 300n }), `${pre}s_milli must be 0 in phase 1`);
    expectRejected(bad({ r_effective: 1800n }), `${pre}r_effective must be 2000`);
    expectRejected(bad({ r_source: 'volume' }), `${pre}r_source is inconsistent with the R candidates`);
    expectRejected(bad({ r_source: 'genesis' }), `${pre}r_source must be volume, price_floor, tied or collusion`);
    expectRejected(bad({ extra: 1n }), `${pre}unknown field`);
    expectRejected(bad({ twap_milli_usd: '250' }), `${pre}twap_milli_usd must be an integer literal`);
    // collusion: floor(950 * 1000 / 250) = 3800 is not below max(1800, 2000) → not the source
    expectRejected(bad({ r_collusion: 3799n }), `${pre}r_collusion must be 3800`);
    expectRejected(bad({ r_collusion: 3800n, r_source: 'collusion' }), `${pre}r_source is inconsistent with the R candidates`);
    expect(t.sc.submit(bad({ r_collusion: 3800n }), 'live').status).toBe('applied');
    // twap 1000 → r_collusion 950 < 2000: collusion sets R
    const e2 = epochValue(2n, T0 + DAY, { twap_milli_usd: 1000n, r_collusion: 950n, r_effective: 950n, r_source: 'collusion' });
    expect(t.sc.submit(oracleBlock(t, [set('epoch.2', e2)]), 'live').status).toBe('applied');
    const e3 = epochValue(3n, T0 + 2n * DAY, { r_volume: 2000n, r_source: 'tied', payout_cap: 0n });
    expect(t.sc.submit(oracleBlock(t, [set('epoch.3', e3)]), 'live').status).toBe('applied');
  });

  test('without sys.oracle the oracle prefix is ordinary DAO space', () => {
    const g = t.sc.blockAt(0n)!;
    const noOracle = { ...g, ops: g.ops.filter((op) => op.key !== 'sys.oracle') };
    noOracle.hash = '';
    reseal(noOracle, []);
    const chain = openChain(undefined, emitStatechainBlock(noOracle));
    t = chain;
    expect(t.sc.submit(dao(set('epoch.0', '{"anything":true}')), 'live').status).toBe('applied');
    expect(t.sc.asOf(T0).epochCandidates(T0)).toEqual([]);
  });
});
