// State chain routes (api.md §9) against the real daemon: DAO-signed submission (201), the no-op
// resubmission (201), retryable gaps (503 + Retry-After: 1) and final rejections (400), raw values,
// key-cursor paging of the KV map and the block window.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonObject, parseJson, RawJson, type JsonValue } from '../../ledger/codec/json.js';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import type { StatechainBlock } from '../../ledger/service.js';
import { emitStatechainBlock, statechainHash } from '../../ledger/statechain/block.js';
import { startDevNode, type ApiResponse, type DevNode } from './harness.js';
import { devKey, nowNsExact, type DevKey } from './dev-blocks.js';

const GENESIS = '8e0376ecec6ac76122bec7c7c069bf26999bccd98f89daf648cfde546375b740';
const dao = [devKey(3), devKey(4)];

function block(index: bigint, prevHash: string, ops: [string, string, string?][], signers: DevKey[], timestamp = nowNsExact()): string {
  const b: StatechainBlock = {
    index,
    prev_hash: prevHash,
    ops: ops.map(([action, key, text]) =>
      text === undefined ? { action: action as 'delete', key } : { action: action as 'set', key, value: new RawJson(text, parseJson(text)) },
    ),
    signatures: [],
    hash: '',
    timestamp,
  };
  b.hash = statechainHash(b);
  b.signatures = signers.map((k) => ({ public_key: k.publicKey, signature: signEd25519(k.seed, Buffer.from(b.hash, 'hex')) }));
  return emitStatechainBlock(b);
}

function obj(res: ApiResponse): Record<string, JsonValue> {
  if (!isJsonObject(res.json)) throw new Error(`expected a JSON object, got ${res.status} ${res.text}`);
  return res.json;
}

let node: DevNode;
beforeAll(async () => {
  node = await startDevNode();
});
afterAll(async () => {
  await node?.stop();
});

describe('state chain', () => {
  // A value with insignificant whitespace: it is hashed, stored and served as written.
  const motd = '{ "text": "hello",  "n": 18446744073709551615 }';
  const b1 = block(1n, GENESIS, [['set', 'app.motd', motd], ['set', 'app.a', '1'], ['set', 'app.b', '"two"']], dao);
  const b1Hash = (parseJson(b1) as { hash: string }).hash;

  it('serves the genesis tip, window, block by index, keyset and raw values', async () => {
    const tip = obj(await node.api.get('/statechain/tip'));
    expect(tip.index).toBe(0n);
    expect(tip.hash).toBe(GENESIS);
    const w = obj(await node.api.get('/statechain/blocks?start=nonsense&limit=0'));
    expect(w.block_count).toBe(1n);
    expect((w.blocks as JsonValue[]).length).toBe(1);
    expect(obj(await node.api.get('/statechain/blocks/0')).hash).toBe(GENESIS);
    expect((await node.api.get('/statechain/blocks?start=5')).json).toEqual({ blocks: [], block_count: 1n });
    const missing = await node.api.get('/statechain/blocks/7');
    expect({ status: missing.status, body: missing.json }).toEqual({ status: 404, body: { error: 'block not found' } });
    expect((await node.api.get('/statechain/keyset')).json).toEqual({
      keys: [devKey(3).publicKey, devKey(4).publicKey, devKey(5).publicKey],
      threshold: 2n,
    });
    const nid = await node.api.get('/statechain/kv/sys.network_id');
    expect(nid.text).toBe('"devnet"\n');
    expect(nid.headers['content-type']).toBe('application/json');
    const absent = await node.api.get('/statechain/kv/no.such.key');
    expect({ status: absent.status, body: absent.json }).toEqual({ status: 404, body: { error: 'key not found' } });
  });

  it('applies a DAO-signed block with 201 and keeps values verbatim', async () => {
    const res = await node.api.post('/statechain/blocks', b1);
    expect(res.status, res.text).toBe(201);
    expect(res.text).toBe(b1 + '\n');
    expect(obj(await node.api.get('/statechain/tip')).index).toBe(1n);
    const v = await node.api.get('/statechain/kv/app.motd');
    expect(v.text).toBe(motd + '\n');
    expect(obj(await node.api.get('/statechain/blocks/1')).hash).toBe(b1Hash);
    expect(obj(await node.api.get('/statechain/blocks?start=1')).block_count).toBe(2n);
  });

  it('answers a resubmission of the held block 201 (no-op)', async () => {
    const res = await node.api.post('/statechain/blocks', b1);
    expect(res.status).toBe(201);
    expect(obj(await node.api.get('/statechain/tip')).index).toBe(1n);
  });

  it('pages the KV map by key cursor with X-Next-After, within the prefix', async () => {
    const p1 = await node.api.get('/statechain/kv?prefix=app.&limit=2');
    expect(p1.text).toBe(`{"app.a":1,"app.b":"two"}\n`);
    expect(p1.headers['x-next-after']).toBe('app.b');
    const p2 = await node.api.get('/statechain/kv?prefix=app.&limit=2&after=app.b');
    expect(p2.text).toBe(`{"app.motd":${motd}}\n`);
    expect(p2.headers['x-next-after']).toBeUndefined();
    const all = obj(await node.api.get('/statechain/kv'));
    expect(Object.keys(all)).toEqual([...Object.keys(all)].sort());
    expect(all['sys.network_id']).toBe('devnet');
    const bad = await node.api.get('/statechain/kv?after=UPPER');
    expect({ status: bad.status, body: bad.json }).toEqual({ status: 400, body: { error: 'invalid after' } });
  });

  it('answers gaps and a stale prev_hash 503 with Retry-After: 1 and retryable true', async () => {
    const gap = await node.api.post('/statechain/blocks', block(5n, b1Hash, [['set', 'app.c', '3']], dao));
    expect(gap.status).toBe(503);
    expect(gap.headers['retry-after']).toBe('1');
    expect(obj(gap)).toEqual({ error: 'block rejected: expected index 2, got 5: statechain gap', retryable: true });
    const stale = await node.api.post('/statechain/blocks', block(2n, GENESIS, [['set', 'app.c', '3']], dao));
    expect(stale.status).toBe(503);
    expect(obj(stale)).toEqual({ error: `block rejected: prev_hash mismatch: expected ${b1Hash}, got ${GENESIS}`, retryable: true });
  });

  it('answers final rejections 400 with retryable false', async () => {
    const weak = await node.api.post('/statechain/blocks', block(2n, b1Hash, [['set', 'app.c', '3']], [devKey(3)]));
    expect({ status: weak.status, body: weak.json }).toEqual({
      status: 400,
      body: { error: 'block rejected: insufficient signatures: got 1, need 2', retryable: false },
    });
    const mixed = await node.api.post('/statechain/blocks', block(2n, b1Hash, [['set', 'epoch.9', '{}'], ['set', 'app.c', '3']], dao));
    expect(mixed.status).toBe(400);
    expect(obj(mixed)).toEqual({ error: 'block rejected: DAO block cannot write to oracle prefix "epoch." (key: epoch.9)', retryable: false });
    const body = await node.api.post('/statechain/blocks', '{"index":"one"}');
    expect({ status: body.status, body: body.json }).toEqual({ status: 400, body: { error: 'invalid request body', retryable: false } });
    const ct = await node.api.post('/statechain/blocks', b1, { 'Content-Type': 'text/plain' });
    expect({ status: ct.status, body: ct.json }).toEqual({ status: 415, body: { error: 'content type must be application/json', retryable: false } });
  });
});
