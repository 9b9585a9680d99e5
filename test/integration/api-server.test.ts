// The request pipeline of the real daemon (api.md §1, §3, §12, §13, §15, §16.1): /pow guard, Host
// check, CORS, routing (404/405/Allow), content type, bodies, path parameters, the manifest, the
// read routes of a fresh devnet node and the ops listener.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { startDevNode, type ApiResponse, type DevNode } from './harness.js';
import { devKey } from './dev-blocks.js';
import { DEVNET_LEDGER_GENESIS_HASH } from '../../ledger/genesis/devnet.js';

const DEV1 = devKey(1).address;
const UPPER = 'A'.repeat(64);
const ZERO64 = '0'.repeat(64);

/** api.md §3, in manifest order. */
const ROUTE_TABLE: [string, string][] = [
  ['GET', '/'],
  ['GET', '/node'],
  ['GET', '/network/activations'],
  ['GET', '/network/readiness'],
  ['GET', '/health'],
  ['GET', '/ready'],
  ['GET', '/accounts'],
  ['GET', '/accounts/{address}/balance'],
  ['GET', '/accounts/{address}/chain'],
  ['GET', '/accounts/{address}/keyset'],
  ['GET', '/accounts/{address}/reputation'],
  ['GET', '/reputation'],
  ['GET', '/frontiers'],
  ['GET', '/supply'],
  ['GET', '/pending'],
  ['GET', '/pending/{address}'],
  ['GET', '/blocks/recent'],
  ['GET', '/blocks/{hash}'],
  ['POST', '/blocks/send'],
  ['POST', '/blocks/receive'],
  ['POST', '/blocks/lease'],
  ['POST', '/blocks/lease_accept'],
  ['POST', '/blocks/lease_settle'],
  ['POST', '/blocks/lease_cancel'],
  ['POST', '/blocks/lease_force_settle'],
  ['POST', '/blocks/lease_renew'],
  ['POST', '/blocks/multisig_open'],
  ['POST', '/blocks/multisig_update'],
  ['POST', '/blocks/burn'],
  ['POST', '/blocks/mint'],
  ['GET', '/conflicts'],
  ['GET', '/conflicts/{account}'],
  ['GET', '/delegation'],
  ['GET', '/providers'],
  ['GET', '/certificate'],
  ['GET', '/certificate/hash/{hash}'],
  ['GET', '/certificate/{provider}'],
  ['GET', '/leases'],
  ['GET', '/leases/{hash}'],
  ['POST', '/lease/request'],
  ['POST', '/attestation/request'],
  ['GET', '/vms'],
  ['GET', '/vms/{leaseHash}'],
  ['POST', '/tunnel/{leaseHash}/tcp'],
  ['GET', '/statechain/tip'],
  ['GET', '/statechain/blocks'],
  ['GET', '/statechain/blocks/{index}'],
  ['GET', '/statechain/kv'],
  ['GET', '/statechain/kv/{key}'],
  ['GET', '/statechain/keyset'],
  ['POST', '/statechain/blocks'],
  ['GET', '/directory'],
  ['GET', '/directory/{account}'],
  ['POST', '/directory/register'],
  ['POST', '/chat/send'],
  ['GET', '/chat/auth/challenge'],
  ['GET', '/chat/messages'],
  ['GET', '/chat/contacts'],
  ['GET', '/chat/events'],
];

function obj(res: ApiResponse): Record<string, JsonValue> {
  if (!isJsonObject(res.json)) throw new Error(`expected a JSON object, got ${res.status} ${res.text}`);
  return res.json;
}

function expectError(res: ApiResponse, status: number, error: string, extra: Record<string, JsonValue> = {}): void {
  expect({ status: res.status, body: res.json }).toEqual({ status, body: { error, ...extra } });
  expect(res.headers['content-type']).toBe('application/json');
  expect(res.text.endsWith('}\n')).toBe(true);
}

function expectCors(res: ApiResponse): void {
  expect(res.headers['access-control-allow-origin']).toBe('http://localhost:3000');
  expect(res.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
  expect(res.headers['access-control-allow-headers']).toBe('Content-Type, Authorization, X-Signature');
  expect(res.headers['access-control-expose-headers']).toBe('X-Next-After, Retry-After');
  expect(res.headers['access-control-max-age']).toBe('3600');
}

let node: DevNode;

beforeAll(async () => {
  node = await startDevNode({ args: ['--api-allowed-hosts', 'node.example.org'] });
});

afterAll(async () => {
  await node?.stop();
});

describe('request pipeline', () => {
  it('answers 404 for /pow and everything below it, for every method, with CORS', async () => {
    for (const [method, path] of [
      ['GET', '/pow'],
      ['POST', '/pow'],
      ['OPTIONS', '/pow'],
      ['DELETE', '/pow/anything'],
      ['GET', '/pow/x/y'],
    ] as const) {
      const res = await node.api.request(method, path, { headers: { Host: 'evil.example' } });
      expectError(res, 404, 'not found');
      expectCors(res);
    }
  });

  it('checks the Host header: loopback names, the allowed extra name, ports ignored, case-insensitive', async () => {
    for (const host of ['localhost', 'LOCALHOST:8080', '127.0.0.1', '[::1]:1234', 'node.example.org', 'Node.Example.Org:443']) {
      expect((await node.api.get('/health', { Host: host })).status, host).toBe(200);
    }
    const denied = await node.api.get('/node', { Host: 'rebinding.attacker.example' });
    expectError(denied, 403, 'host not allowed');
    expectCors(denied);
    const deniedPost = await node.api.post('/blocks/send', '{}', { Host: 'attacker.example' });
    expectError(deniedPost, 403, 'host not allowed', { retryable: false });
  });

  it('answers any OPTIONS with 204, no body, CORS headers and no routing', async () => {
    for (const path of ['/node', '/no/such/route', '/blocks/send']) {
      const res = await node.api.request('OPTIONS', path);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectCors(res);
    }
  });

  it('answers unknown paths 404 without cleaning the path', async () => {
    for (const path of ['/nope', '/node/', '//node', '/accounts/' + DEV1, '/blocks/recent/x', '/Node', '/./node']) {
      const res = await node.api.get(path);
      expectError(res, 404, 'not found');
      expectCors(res);
    }
  });

  it('answers a known path with another method 405 and an exact Allow header', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/blocks/send', 'POST'],
      ['POST', '/node', 'GET'],
      ['HEAD', '/node', 'GET'],
      ['DELETE', '/statechain/blocks', 'GET, POST'],
      ['PUT', '/lease/request', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await node.api.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      if (method !== 'HEAD') expect(res.json).toEqual({ error: 'method not allowed' });
    }
    // Under /blocks/ every non-2xx carries retryable; /blocks/recent is a literal route (405).
    const recent = await node.api.post('/blocks/recent', '{}');
    expectError(recent, 405, 'method not allowed', { retryable: false });
    expect(recent.headers.allow).toBe('GET');
  });

  it('answers POST /blocks/<not submittable> 404 with retryable false', async () => {
    for (const t of ['genesis', 'transfer', DEVNET_LEDGER_GENESIS_HASH]) {
      expectError(await node.api.post(`/blocks/${t}`, '{}'), 404, 'not found', { retryable: false });
    }
  });

  it('requires application/json on body routes (415), tolerating case and parameters', async () => {
    expectError(await node.api.post('/blocks/send', '{}', { 'Content-Type': 'text/plain' }), 415, 'content type must be application/json', { retryable: false });
    expectError(await node.api.request('POST', '/blocks/receive'), 415, 'content type must be application/json', { retryable: false });
    expectError(await node.api.post('/statechain/blocks', '{}', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'content type must be application/json', { retryable: false });
    expectError(await node.api.post('/attestation/request', '{}', { 'Content-Type': 'multipart/form-data' }), 415, 'content type must be application/json');
    // Accepted media type spellings reach the body check.
    const res = await node.api.post('/attestation/request', 'not json', { 'Content-Type': 'Application/JSON; charset=utf-8' });
    expectError(res, 400, 'invalid request body');
    // The tunnel route reads no body and requires no content type: it reaches its own checks.
    expectError(await node.api.request('POST', `/tunnel/${ZERO64}/tcp`, { body: 'x', headers: { 'Content-Type': 'text/plain' } }), 404, 'lease not found');
  });

  it('rejects empty, malformed, oversized and mistyped bodies with 400 invalid request body', async () => {
    const bad = ['', '   ', 'nope', '{"type":', '[1,2', '\u0000'];
    for (const body of bad) {
      expectError(await node.api.post('/blocks/send', body), 400, 'invalid request body', { retryable: false });
    }
    const big = `{"memo":"${'x'.repeat(1_048_576)}"}`;
    expectError(await node.api.post('/blocks/send', big), 400, 'invalid request body', { retryable: false });
    // A field of the wrong JSON type or out of range.
    expectError(await node.api.post('/blocks/send', { type: 'send', amount: 'ten' }), 400, 'invalid request body', { retryable: false });
    expectError(await node.api.post('/blocks/send', '{"type":"send","amount":1.5}'), 400, 'invalid request body', { retryable: false });
    expectError(await node.api.post('/blocks/send', '{"type":"send","amount":18446744073709551616}'), 400, 'invalid request body', { retryable: false });
    expectError(await node.api.post('/attestation/request', '[]'), 400, 'invalid request body');
  });

  it('reads only the first JSON value of a body', async () => {
    // The first value is a well-formed block of the wrong type: the trailing text is never read.
    const res = await node.api.post('/blocks/send', '{"type":"receive"} this is ignored {');
    expectError(res, 400, 'block type mismatch', { retryable: false });
    expectError(await node.api.post('/blocks/send', '{"account":"x"}'), 400, 'block type mismatch', { retryable: false });
  });

  it('validates path parameters first, never lowercasing', async () => {
    const cases: [string, string][] = [
      [`/accounts/${UPPER}/balance`, 'invalid address'],
      ['/accounts/abc/chain', 'invalid address'],
      [`/accounts/${DEV1}0/keyset`, 'invalid address'],
      [`/accounts/${UPPER}/reputation`, 'invalid address'],
      [`/pending/${UPPER}`, 'invalid address'],
      [`/blocks/${DEVNET_LEDGER_GENESIS_HASH.toUpperCase()}`, 'invalid hash'],
      ['/blocks/xyz', 'invalid hash'],
      ['/blocks/%zz', 'invalid hash'],
      [`/conflicts/${UPPER}`, 'invalid account'],
      ['/leases/123', 'invalid hash'],
      ['/vms/nothex', 'invalid lease hash'],
      ['/statechain/blocks/abc', 'invalid index'],
      ['/statechain/blocks/-1', 'invalid index'],
      ['/statechain/blocks/18446744073709551616', 'invalid index'],
      ['/statechain/kv/SYS.NETWORK_ID', 'invalid key'],
      [`/statechain/kv/${'a'.repeat(129)}`, 'invalid key'],
    ];
    for (const [path, error] of cases) {
      const res = await node.api.get(path);
      expect({ path, status: res.status, body: res.json }).toEqual({ path, status: 400, body: { error } });
    }
    expectError(await node.api.request('POST', '/tunnel/ABC/tcp'), 400, 'invalid lease hash');
  });

  it('adds CORS headers to successes and errors alike', async () => {
    expectCors(await node.api.get('/node'));
    expectCors(await node.api.get('/blocks/xyz'));
    expectCors(await node.api.post('/blocks/send', 'x'));
  });
});

describe('GET / manifest', () => {
  it('lists exactly the route table of api.md §3, in order, and only / matches', async () => {
    const res = await node.api.get('/');
    expect(res.status).toBe(200);
    const m = obj(res);
    expect(m.name).toBe('net');
    expect(m.version).toBe('net/0.1.0');
    expect(m.network_id).toBe('devnet');
    expect(m.address).toBe(DEV1);
    expect(m.node_id).toBe(obj(await node.api.get('/node')).id);
    const endpoints = m.endpoints as { method: string; path: string; description: string }[];
    expect(endpoints.map((e) => [e.method, e.path])).toEqual(ROUTE_TABLE);
    for (const e of endpoints) expect(e.description.length).toBeGreaterThan(0);
    expect(endpoints.find((e) => e.path === '/')!.description).toBe('This route table');
    expect((await node.api.get('/?x=1&y')).status).toBe(200);
    expectError(await node.api.get('//'), 404, 'not found');
  });

  it('routes every listed pattern (no 404 for any manifest entry)', async () => {
    for (const [method, path] of ROUTE_TABLE) {
      const concrete = path.replace(/\{[a-zA-Z]+\}/g, (p) => (p === '{index}' ? '0' : p === '{key}' ? 'sys.phase' : ZERO64));
      const res = await node.api.request(method, concrete, method === 'POST' ? { body: '{}' } : {});
      expect({ route: `${method} ${path}`, notRouted: res.status === 404 && res.json !== undefined && (res.json as { error?: string }).error === 'not found' }).toEqual({
        route: `${method} ${path}`,
        notRouted: false,
      });
      expect(res.status, `${method} ${path}`).not.toBe(405);
    }
  });
});

describe('reads of a fresh devnet node', () => {
  it('GET /node reports identity, hex difficulties, lease timing and the dev certificate', async () => {
    const n = obj(await node.api.get('/node'));
    expect(n.address).toBe(DEV1);
    expect(n.public_key).toBe(devKey(1).publicKey);
    expect(typeof n.id === 'string' && n.id.startsWith('12D3KooW')).toBe(true);
    expect(n.version).toBe('net/0.1.0');
    expect(n.network_id).toBe('devnet');
    expect(n.provider).toBe(false);
    expect(n.peers).toEqual([]);
    expect(n.peer_count).toBe(0n);
    expect(n.pow_difficulty).toBe('2');
    expect(n.chat_pow_difficulty).toBe('2');
    expect(n.lease_timing).toEqual({
      lease_min_duration_secs: 5n,
      lease_settle_grace_ns: 30_000_000_000n,
      lease_force_settle_gap_ns: 25_000_000_000n,
      lease_escrow_expiry_ns: 3_600_000_000_000n,
      lease_archive_gap_ns: 3_600_000_000_000n,
      max_attestation_skew_ns: 10_000_000_000n,
    });
    expect(n.total_delegated_weight).toBe(42_000_000_000_000n);
    // --dev issues dev1's certificate at start (in a worker; allow it a moment).
    let cert = n.certificate as Record<string, JsonValue>;
    for (let i = 0; i < 100 && cert.valid !== true; i++) {
      await new Promise((r) => setTimeout(r, 200));
      cert = obj(await node.api.get('/node')).certificate as Record<string, JsonValue>;
    }
    expect(cert.valid).toBe(true);
    expect(cert.hash).toBe(obj(await node.api.get('/certificate')).hash);
    expect(typeof cert.expires_at === 'bigint' && cert.expires_at > 0n).toBe(true);
  });

  it('GET /health and /ready answer 200 with no-store and their checks', async () => {
    const h = await node.api.get('/health');
    expect(h.status).toBe(200);
    expect(h.headers['cache-control']).toBe('no-store');
    const hb = obj(h);
    expect(hb.status).toBe('ok');
    expect(hb.error).toBeUndefined();
    expect((hb.checks as { name: string }[]).map((c) => c.name)).toEqual(['serving', 'sampler_alive', 'store_readable']);
    const r = await node.api.get('/ready');
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    const rb = obj(r);
    expect(rb.status).toBe('ready');
    expect((rb.checks as { name: string }[]).map((c) => c.name)).toEqual([
      'live',
      'sample_present',
      'sample_fresh',
      'peers',
      'synced',
      'delegated_weight',
      'quorum_reachable',
      'finality_advancing',
    ]);
    expect(rb.delegated_weight_micro_xe).toBe(42_000_000_000_000n);
    expect(typeof rb.frontier_fingerprint === 'string' && /^[0-9a-f]{16}$/.test(rb.frontier_fingerprint)).toBe(true);
  });

  it('serves the genesis account, its chain and the genesis block', async () => {
    expect((await node.api.get('/accounts')).json).toEqual([
      { address: DEV1, balances: { XE: 42_000_000_000_000n }, block_count: 1n, frontier: DEVNET_LEDGER_GENESIS_HASH, last_block_timestamp: 0n },
    ]);
    expect((await node.api.get(`/accounts/${DEV1}/balance`)).json).toEqual({
      address: DEV1,
      balances: { XE: 42_000_000_000_000n },
      spendable: { XE: 42_000_000_000_000n },
      final_height: 1n,
    });
    const chain = obj(await node.api.get(`/accounts/${DEV1}/chain`));
    expect(chain.address).toBe(DEV1);
    expect(chain.total).toBe(1n);
    const blocks = chain.blocks as Record<string, JsonValue>[];
    expect(blocks.map((b) => [b.type, b.hash, b.finalized])).toEqual([['genesis', DEVNET_LEDGER_GENESIS_HASH, true]]);
    const g = obj(await node.api.get(`/blocks/${DEVNET_LEDGER_GENESIS_HASH}`));
    expect(g.hash).toBe(DEVNET_LEDGER_GENESIS_HASH);
    expect(g.finalized).toBe(true);
    expectError(await node.api.get(`/blocks/${ZERO64}`), 404, 'block not found');
    // Unknown well-formed accounts: 200 with empty values; record reads: 404.
    expect((await node.api.get(`/accounts/${ZERO64}/balance`)).json).toEqual({ address: ZERO64, balances: {}, spendable: {}, final_height: 0n });
    expect((await node.api.get(`/accounts/${ZERO64}/chain`)).json).toEqual({ address: ZERO64, total: 0n, blocks: [] });
    expectError(await node.api.get(`/accounts/${DEV1}/keyset`), 404, 'not a multisig account');
    expectError(await node.api.get(`/accounts/${DEV1}/reputation`), 404, 'no reputation activity');
    expect((await node.api.get('/reputation')).json).toEqual({});
    expect((await node.api.get(`/pending/${ZERO64}`)).json).toEqual({ address: ZERO64, pending: [] });
    expect((await node.api.get(`/conflicts/${ZERO64}`)).json).toEqual({ address: ZERO64, conflicts: [] });
    expect((await node.api.get('/conflicts')).json).toEqual([]);
    expect((await node.api.get('/pending')).json).toEqual([]);
  });

  it('serves frontiers, delegation, supply and the network documents', async () => {
    expect((await node.api.get('/frontiers')).json).toEqual({ [DEV1]: DEVNET_LEDGER_GENESIS_HASH });
    expectError(await node.api.get(`/frontiers?after=${UPPER}`), 400, 'invalid after');
    expectError(await node.api.get('/reputation?after=short'), 400, 'invalid after');
    expect((await node.api.get('/delegation')).json).toEqual({
      weights: { [DEV1]: 42_000_000_000_000n },
      total_weight: 42_000_000_000_000n,
      ineligible_weights: {},
      ineligible_weight: 0n,
      eligibility_restricted: false,
      eligibility_failed_open: false,
    });
    const s = obj(await node.api.get('/supply'));
    expect(s.genesis_supply).toBe(42_000_000_000_000n);
    expect(s.conserved).toBe(true);
    expect(s.stable).toBe(true);
    expect(Object.keys(s.assets as object).sort()).toEqual(['XE', 'XUSD']);
    const a = obj(await node.api.get('/network/activations'));
    expect(a).toMatchObject({ tip_index: 0n, features: [], known_features: ['noop'], gated_block_types: {}, protocol_version: '1.0.0', min_protocol_version: '' });
    const r = obj(await node.api.get('/network/readiness'));
    expect(r).toMatchObject({ total_weight: 42_000_000_000_000n, resolved_reps: 1n, total_reps: 1n, unknown_weight: 0n });
  });

  it('serves leases and VMs of a node without leases', async () => {
    expect((await node.api.get('/leases')).json).toEqual([]);
    expect((await node.api.get('/leases?state=accepted&offset=-3&limit=abc')).json).toEqual([]);
    expectError(await node.api.get('/leases?state=bogus'), 400, 'invalid state: must be one of created, accepted, settled, cancelled, unfulfilled, expired');
    expectError(await node.api.get(`/leases/${ZERO64}`), 404, 'lease not found');
    expect((await node.api.get('/vms')).json).toEqual([]);
    expectError(await node.api.get(`/vms/${ZERO64}`), 404, 'lease not found');
    expectError(await node.api.request('POST', `/tunnel/${ZERO64}/tcp`), 404, 'lease not found');
  });

  it('serves recent blocks with limit and since', async () => {
    const recent = await node.api.get('/blocks/recent');
    expect(((recent.json as Record<string, JsonValue>[]) ?? []).map((b) => b.hash)).toContain(DEVNET_LEDGER_GENESIS_HASH);
    expect((await node.api.get('/blocks/recent?since=0')).json).toEqual([]);
    expect((await node.api.get('/blocks/recent?since=nonsense')).json).toEqual([]);
    expect(((await node.api.get('/blocks/recent?limit=0')).json as unknown[]).length).toBeGreaterThan(0);
  });
});

describe('ops listener', () => {
  it('serves its index, metrics, health and readiness, with the Host check', async () => {
    expect((await node.ops.get('/')).json).toEqual({ name: 'net-ops', endpoints: ['GET /metrics', 'GET /health', 'GET /ready'] });
    const metrics = await node.ops.get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('net_build_info{version="net/0.1.0",network_id="devnet",role="node"} 1');
    for (const name of ['net_ready 1', 'net_peer_count 0', 'net_blocks_total', 'net_conflicts_open 0', 'net_supply_conserved{asset="XE"} 1', 'net_certificate_valid', 'net_finality_latency_seconds_bucket']) {
      expect(metrics.text).toContain(name);
    }
    expect((await node.ops.get('/health')).status).toBe(200);
    expect((await node.ops.get('/ready')).status).toBe(200);
    expectError(await node.ops.get('/metrics', { Host: 'evil.example' }), 403, 'host not allowed');
    expectError(await node.ops.get('/nope'), 404, 'not found');
    // No CORS on the ops listener.
    expect(metrics.headers['access-control-allow-origin']).toBeUndefined();
  });
});
