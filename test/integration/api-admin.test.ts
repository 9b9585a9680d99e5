// Operator-only and limited parts of the API against the real daemon: the admin token matrix and
// the validation of POST /lease/request (api.md §2, §7.4), per-client rate limits (§14) and a node
// whose proof-of-work difficulty no nonce meets.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { startDevNode, type ApiResponse, type DevNode } from './harness.js';
import { devKey, finishBlock, nowNsExact, sendBlock } from './dev-blocks.js';
import { DEVNET_LEDGER_GENESIS_HASH } from '../../ledger/genesis/devnet.js';

const TOKEN = 's3cret-token';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const DISABLED = 'operator endpoint disabled: no admin token configured (set NET_API_ADMIN_TOKEN)';
const INVALID = 'invalid or missing admin token';
const ACCESS_KEY = devKey(9).publicKey;

function body(res: ApiResponse): Record<string, JsonValue> {
  if (!isJsonObject(res.json)) throw new Error(`expected a JSON object, got ${res.status} ${res.text}`);
  return res.json;
}

function statusAndBody(res: ApiResponse): { status: number; body: JsonValue | undefined } {
  return { status: res.status, body: res.json };
}

let open: DevNode;
let guarded: DevNode;

beforeAll(async () => {
  [open, guarded] = await Promise.all([
    startDevNode(),
    startDevNode({ env: { NET_API_ADMIN_TOKEN: TOKEN }, args: ['--pow-difficulty', '0xffffffffffffffff'] }),
  ]);
});

afterAll(async () => {
  await Promise.all([open?.stop(), guarded?.stop()]);
});

describe('admin token (POST /lease/request)', () => {
  it('answers 403 when no token is configured, whatever the request carries', async () => {
    for (const headers of [{}, AUTH, { ...AUTH, 'Content-Type': 'text/plain' }]) {
      expect(statusAndBody(await open.api.request('POST', '/lease/request', { body: '{}', headers }))).toEqual({ status: 403, body: { error: DISABLED } });
    }
  });

  it('answers 401 for a missing or wrong token, before the content type check', async () => {
    const wrong: Record<string, string>[] = [{}, { Authorization: 'Bearer nope' }, { Authorization: `bearer ${TOKEN}` }, { Authorization: `Bearer  ${TOKEN}` }, { Authorization: TOKEN }];
    for (const h of wrong) {
      const res = await guarded.api.request('POST', '/lease/request', { body: 'x', headers: { ...h, 'Content-Type': 'text/plain' } });
      expect(statusAndBody(res)).toEqual({ status: 401, body: { error: INVALID } });
    }
    // The token is never read from the query string.
    const q = await guarded.api.post(`/lease/request?token=${TOKEN}`, '{}');
    expect(q.status).toBe(401);
  });

  it('with the token: the content type, then the body', async () => {
    expect(statusAndBody(await guarded.api.post('/lease/request', '{}', { ...AUTH, 'Content-Type': 'text/plain' }))).toEqual({
      status: 415,
      body: { error: 'content type must be application/json' },
    });
    expect(statusAndBody(await guarded.api.post('/lease/request', 'nope', AUTH))).toEqual({ status: 400, body: { error: 'invalid request body' } });
  });

  it('validates the lease request in the documented order and texts', async () => {
    const ok = { vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 300n, access_pub_key: ACCESS_KEY };
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'at least one resource required (vcpus, memory_mb, disk_gb)'],
      [{ vcpus: 1n }, 'duration required'],
      [{ ...ok, vcpus: 5000n }, 'lease vcpus must be <= 4096, got 5000'],
      [{ ...ok, memory_mb: 67_108_865n }, 'lease memory_mb must be <= 67108864, got 67108865'],
      [{ ...ok, disk_gb: 1_048_577n }, 'lease disk_gb must be <= 1048576, got 1048577'],
      [{ ...ok, duration: 4n }, 'lease duration must be >= 5 seconds'],
      [{ ...ok, duration: 31_536_001n }, 'lease duration must be <= 31536000 seconds'],
      [{ ...ok, access_pub_key: undefined }, 'access_pub_key required'],
      [{ ...ok, access_pub_key: ACCESS_KEY.toUpperCase() }, 'access_pub_key must be 64 lowercase hex characters'],
      [{ ...ok, access_pub_key: 'abcd' }, 'access_pub_key must be 32 bytes, got 2'],
      [{ ...ok, vcpus: '1' }, 'invalid request body'],
      [{ ...ok, vcpus: -1n }, 'invalid request body'],
      [{ ...ok, provider: 'XYZ' }, 'invalid request body'],
      [{ ...ok, provider: devKey(1).address }, 'request lease: cannot lease to self'],
    ];
    for (const [req, error] of cases) {
      expect({ req: Object.keys(req).join(','), ...statusAndBody(await guarded.api.post('/lease/request', req, AUTH)) }).toEqual({
        req: Object.keys(req).join(','),
        status: 400,
        body: { error },
      });
    }
  });

  it('waits the documented 30 s for an offer that cannot come on a peerless node', { timeout: 45_000 }, async () => {
    const started = Date.now();
    const res = await guarded.api.post('/lease/request', { vcpus: 1n, duration: 60n, access_pub_key: ACCESS_KEY, provider: devKey(2).address }, AUTH);
    expect(statusAndBody(res)).toEqual({ status: 400, body: { error: 'request lease: no offer received within 30s' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(29_500);
  });
});

describe('proof of work at the node difficulty', () => {
  it('advertises the difficulty and rejects a nonce below it as a final error', async () => {
    expect(body(await guarded.api.get('/node')).pow_difficulty).toBe('ffffffffffffffff');
    const dev1 = devKey(1);
    const send = finishBlock(
      sendBlock(dev1, { previous: DEVNET_LEDGER_GENESIS_HASH, balanceAfter: 41_999_999_999_999n, to: devKey(6).address, amount: 1n, timestamp: nowNsExact() }),
      dev1,
    );
    const res = await guarded.api.post('/blocks/send', send);
    expect(statusAndBody(res)).toEqual({ status: 400, body: { error: 'block rejected: invalid proof of work', retryable: false } });
  });
});

describe('rate limits (--rate-limit=true)', () => {
  let limited: DevNode;
  beforeAll(async () => {
    limited = await startDevNode({ args: ['--rate-limit=true'] });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  it('spends the write bucket (burst 50) and answers 429 with Retry-After and retryable on /blocks/*', async () => {
    const results = await Promise.all(Array.from({ length: 70 }, () => limited.api.post('/blocks/send', '{}')));
    const limitedRes = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 400).length).toBeGreaterThanOrEqual(50);
    expect(limitedRes.length).toBeGreaterThan(0);
    for (const r of limitedRes) {
      expect(r.json).toEqual({ error: 'rate limit exceeded', retryable: true });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(r.headers['access-control-allow-origin']).toBe('http://localhost:3000');
    }
    // Other routes of the class carry no retryable; other classes are independent.
    const other = await limited.api.post('/attestation/request', '{}');
    expect(statusAndBody(other)).toEqual({ status: 429, body: { error: 'rate limit exceeded' } });
    expect((await limited.api.get('/node')).status).toBe(200);
    expect((await limited.api.get('/health')).status).toBe(200);
  });

  it('keys clients by the forwarded address only when the peer is loopback', async () => {
    // The daemon's peer here is loopback, so the rightmost X-Forwarded-For entry is the client.
    const fresh = await limited.api.post('/blocks/send', '{}', { 'X-Forwarded-For': '198.51.100.1, 203.0.113.7' });
    expect(fresh.status).toBe(400);
    const realIp = await limited.api.post('/blocks/send', '{}', { 'X-Real-IP': '203.0.113.99' });
    expect(realIp.status).toBe(400);
    // An IPv6 client is keyed by its /64: exhaust one address, then a sibling in the same /64 is limited.
    const a = await Promise.all(Array.from({ length: 60 }, () => limited.api.post('/blocks/send', '{}', { 'X-Forwarded-For': '2001:db8:1:2::1' })));
    expect(a.some((r) => r.status === 429)).toBe(true);
    const sibling = await limited.api.post('/blocks/send', '{}', { 'X-Forwarded-For': '2001:db8:1:2:ffff::9' });
    expect(sibling.status).toBe(429);
    const otherNet = await limited.api.post('/blocks/send', '{}', { 'X-Forwarded-For': '2001:db8:1:3::1' });
    expect(otherNet.status).toBe(400);
  });

  it('spends the probe bucket (burst 100) separately from reads', async () => {
    const probes = await Promise.all(Array.from({ length: 130 }, () => limited.api.get('/health', { 'X-Forwarded-For': '192.0.2.50' })));
    expect(probes.some((r) => r.status === 429)).toBe(true);
    expect((await limited.api.get('/node', { 'X-Forwarded-For': '192.0.2.50' })).status).toBe(200);
  });
});
