// Block submission and the reads it changes (api.md §4–§6), against the real daemon: a dev1 → dev6
// transfer built and signed here, rejections (400 vs 503 and retryable), duplicates, exact integers
// above 2^53, recent blocks, chains, pending entries and key-cursor paging.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { randomBytes } from 'node:crypto';
import { startDevNode, type ApiResponse, type DevNode } from './harness.js';
import { devKey, finishBlock, nowNsExact, receiveBlock, sendBlock } from './dev-blocks.js';
import { DEVNET_LEDGER_GENESIS_HASH } from '../../ledger/genesis/devnet.js';

const dev1 = devKey(1);
const dev6 = devKey(6);
const dev7 = devKey(7);
const GENESIS_BALANCE = 42_000_000_000_000n;
const AMOUNT = 1_500_000n;
/** Above 2^53: a double would round it. */
const BIG_NONCE_START = (1n << 63n) + 12_345n;

let node: DevNode;

function obj(res: ApiResponse): Record<string, JsonValue> {
  if (!isJsonObject(res.json)) throw new Error(`expected a JSON object, got ${res.status} ${res.text}`);
  return res.json;
}

async function waitFinal(hash: string): Promise<Record<string, JsonValue>> {
  for (let i = 0; i < 100; i++) {
    const b = obj(await node.api.get(`/blocks/${hash}`));
    if (b.finalized === true) return b;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`block ${hash} never finalized`);
}

beforeAll(async () => {
  node = await startDevNode();
});

afterAll(async () => {
  await node?.stop();
});

describe('a transfer dev1 → dev6', () => {
  const sendTs = nowNsExact();
  const send = finishBlock(
    sendBlock(dev1, { previous: DEVNET_LEDGER_GENESIS_HASH, balanceAfter: GENESIS_BALANCE - AMOUNT, to: dev6.address, amount: AMOUNT, timestamp: sendTs }),
    dev1,
    { startNonce: BIG_NONCE_START },
  );
  const sendHash = send.hash as string;
  const receive = finishBlock(
    receiveBlock(dev6, { previous: '0', balanceAfter: AMOUNT, source: sendHash, timestamp: sendTs + 1_000_001n }),
    dev6,
  );

  it('accepts the send with 201 and echoes the stored block exactly (integers above 2^53 included)', async () => {
    const res = await node.api.post('/blocks/send', send);
    expect(res.status, res.text).toBe(201);
    expect(res.json).toEqual(send);
    expect(typeof send.pow_nonce === 'bigint' && send.pow_nonce >= BIG_NONCE_START).toBe(true);
    // The exact decimal digits travel both ways.
    expect(res.text).toContain(`"timestamp":${sendTs}`);
    expect(res.text).toContain(`"pow_nonce":${send.pow_nonce}`);
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('answers a duplicate submission 201 without changing anything', async () => {
    const res = await node.api.post('/blocks/send', send);
    expect(res.status).toBe(201);
    expect(res.json).toEqual(send);
    const chain = obj(await node.api.get(`/accounts/${dev1.address}/chain`));
    expect(chain.total).toBe(2n);
  });

  it('shows the pending entry and the debited balance', async () => {
    const pending = obj(await node.api.get(`/pending/${dev6.address}`));
    expect(pending).toEqual({
      address: dev6.address,
      pending: [{ send_hash: sendHash, source: dev1.address, destination: dev6.address, amount: AMOUNT, asset: 'XE', timestamp: sendTs }],
    });
    expect((await node.api.get('/pending')).json).toEqual(pending.pending);
    const bal = obj(await node.api.get(`/accounts/${dev1.address}/balance`));
    expect((bal.balances as Record<string, JsonValue>).XE).toBe(GENESIS_BALANCE - AMOUNT);
    const block = await waitFinal(sendHash);
    expect(block).toEqual({ ...send, finalized: true });
  });

  it('opens dev6 with a receive declaring pub_key', async () => {
    const res = await node.api.post('/blocks/receive', receive);
    expect(res.status, res.text).toBe(201);
    expect(res.json).toEqual(receive);
    expect(receive.pub_key).toBe(dev6.publicKey);
    expect((await node.api.get(`/pending/${dev6.address}`)).json).toEqual({ address: dev6.address, pending: [] });
    await waitFinal(receive.hash as string);
    const bal = obj(await node.api.get(`/accounts/${dev6.address}/balance`));
    expect(bal).toEqual({ address: dev6.address, balances: { XE: AMOUNT }, spendable: { XE: AMOUNT }, final_height: 1n });
    const chain = obj(await node.api.get(`/accounts/${dev6.address}/chain`));
    expect(chain).toEqual({ address: dev6.address, total: 1n, blocks: [{ ...receive, finalized: true }] });
  });

  it('lists both accounts, their frontiers (paged by key cursor) and the recent blocks', async () => {
    const accounts = (await node.api.get('/accounts')).json as Record<string, JsonValue>[];
    const sorted = [dev1.address, dev6.address].sort();
    expect(accounts.map((a) => a.address)).toEqual(sorted);
    const paged = (await node.api.get('/accounts?offset=1&limit=1')).json as Record<string, JsonValue>[];
    expect(paged.map((a) => a.address)).toEqual([sorted[1]]);

    const first = await node.api.get('/frontiers?limit=1');
    expect(first.headers['x-next-after']).toBe(sorted[0]);
    expect(Object.keys(first.json as object)).toEqual([sorted[0]]);
    const second = await node.api.get(`/frontiers?limit=1&after=${first.headers['x-next-after']}`);
    expect(second.headers['x-next-after']).toBeUndefined();
    const frontierOf: Record<string, JsonValue> = { [dev1.address]: sendHash, [dev6.address]: receive.hash as string };
    expect(first.json).toEqual({ [sorted[0]!]: frontierOf[sorted[0]!] });
    expect(second.json).toEqual({ [sorted[1]!]: frontierOf[sorted[1]!] });

    const recent = (await node.api.get('/blocks/recent')).json as Record<string, JsonValue>[];
    expect(recent.slice(0, 2).map((b) => b.hash)).toEqual([receive.hash, sendHash]);
    expect(recent[0]).toEqual(receive);
    // The snapshot is rebuilt at most once per second; since filters before limit truncates.
    const since = (await node.api.get(`/blocks/recent?since=${sendTs}`)).json as Record<string, JsonValue>[];
    expect(since.map((b) => b.hash)).toEqual([receive.hash]);
    expect(((await node.api.get('/blocks/recent?limit=1')).json as unknown[]).length).toBe(1);
    const chain = obj(await node.api.get(`/accounts/${dev1.address}/chain?limit=1&offset=1`));
    expect(chain.total).toBe(2n);
    expect((chain.blocks as Record<string, JsonValue>[]).map((b) => b.hash)).toEqual([sendHash]);
  });
});

describe('rejections', () => {
  const ts = (): bigint => nowNsExact();

  it('answers a retryable rejection 503 with Retry-After and retryable true', async () => {
    const stale = finishBlock(
      sendBlock(dev6, { previous: randomBytes(32).toString('hex'), balanceAfter: 0n, to: dev7.address, amount: 1n, timestamp: ts() }),
      dev6,
    );
    const res = await node.api.post('/blocks/send', stale);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    const body = obj(res);
    expect(body.retryable).toBe(true);
    expect(body.error).toMatch(/^block rejected: previous mismatch: got [0-9a-f]{12}\.\.\., want [0-9a-f]{12}\.\.\.$/);
  });

  it('answers an unopened sender 503 (missing dependency, retryable)', async () => {
    const res = await node.api.post(
      '/blocks/send',
      finishBlock(sendBlock(dev7, { previous: randomBytes(32).toString('hex'), balanceAfter: 0n, to: dev6.address, amount: 1n, timestamp: ts() }), dev7),
    );
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      error: `block rejected: signature: unopened account ${dev7.address.slice(0, 12)}... has no declared public key`,
      retryable: true,
    });
  });

  it('answers a final rejection 400 with retryable false and no Retry-After', async () => {
    const good = finishBlock(
      sendBlock(dev1, { previous: DEVNET_LEDGER_GENESIS_HASH, balanceAfter: 1n, to: dev6.address, amount: 1n, timestamp: ts() }),
      dev1,
    );
    const tampered = { ...good, amount: 2n };
    const res = await node.api.post('/blocks/send', tampered);
    expect(res.status).toBe(400);
    expect(res.headers['retry-after']).toBeUndefined();
    const body = obj(res);
    expect(body.retryable).toBe(false);
    expect(body.error).toMatch(/^block rejected: verify: hash mismatch: got [0-9a-f]{64}, want [0-9a-f]{64}$/);

    const upper = { ...good, destination: (good.destination as string).toUpperCase() };
    expect((await node.api.post('/blocks/send', upper)).json).toEqual({
      error: 'block rejected: invalid destination: must be 64 lowercase hex characters',
      retryable: false,
    });
  });

  it('answers a body of another type 400 block type mismatch', async () => {
    const s = finishBlock(sendBlock(dev6, { previous: '0', balanceAfter: 0n, to: dev7.address, amount: 1n, timestamp: ts() }), dev6);
    expect((await node.api.post('/blocks/receive', s)).json).toEqual({ error: 'block type mismatch', retryable: false });
    expect((await node.api.post('/blocks/send', { ...s, type: 'bogus' })).json).toEqual({ error: 'block type mismatch', retryable: false });
  });

  it('rejects receiving a send twice as a final error', async () => {
    const rx = (await node.api.get(`/accounts/${dev6.address}/chain`)).json as Record<string, JsonValue>;
    const frontier = (rx.blocks as Record<string, JsonValue>[])[0]!.hash as string;
    const send = ((await node.api.get(`/accounts/${dev1.address}/chain?offset=1&limit=1`)).json as Record<string, JsonValue>).blocks as Record<string, JsonValue>[];
    const again = finishBlock(
      receiveBlock(dev6, { previous: frontier, balanceAfter: 2n * AMOUNT, source: send[0]!.hash as string, timestamp: ts() }),
      dev6,
    );
    const res = await node.api.post('/blocks/receive', again);
    expect([400, 503]).toContain(res.status);
    expect(obj(res).retryable).toBe(res.status === 503);
    expect(String(obj(res).error)).toMatch(/^block rejected: /);
  });
});
