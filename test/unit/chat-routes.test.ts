// The chat, directory, attestation, certificate and provider routes on the real API server (real
// HTTP on a loopback port), with the real services and an injected clock. The ledger here is the
// reduced LedgerReads; test/integration/chat-api.test.ts runs the same flows against the daemon.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../agent/api/server.js';
import { chatRoutes } from '../../agent/api/chat.js';
import { directoryRoutes } from '../../agent/api/directory.js';
import { attestationRoutes } from '../../agent/api/attestation.js';
import { certificateRoutes } from '../../agent/api/certificates.js';
import { providerRoutes } from '../../agent/api/providers.js';
import { createPeerServices, type PeerServices } from '../../agent/peer-services.js';
import { LocalNetwork } from '../../agent/network/local.js';
import { signRegistration } from '../../agent/directory/registration.js';
import { chatReadDigest } from '../../agent/chat/read-auth.js';
import { envelopeId } from '../../agent/chat/envelope.js';
import { parseJson, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { solvePow } from '../../ledger/crypto/pow.js';
import { signAttestation } from '../../ledger/crypto/attestation.js';
import type { LedgerService } from '../../ledger/service.js';
import { devKey, devnetTimekeepers, LedgerReads, OTHER_PEER, SELF_PEER, TestClock, type Obj } from './net-helpers.js';

const T = 1_800_000_000_000_000_000n;
const TOKEN = 'secret-token';
const [dev1, dev6, dev7] = [devKey(1), devKey(6), devKey(7)];

interface Served {
  app: FastifyInstance;
  base: string;
  services: PeerServices;
  clock: TestClock;
  ledger: LedgerReads;
}

async function serve(adminToken: string | null): Promise<Served> {
  const clock = new TestClock(T);
  const ledger = new LedgerReads('devnet');
  devnetTimekeepers(ledger, [dev1.publicKey], 1);
  for (const k of [dev1, dev6, dev7]) ledger.open.set(k.address, k.publicKey);
  const services = createPeerServices({
    ledger: Object.assign(ledger, { leases: () => [] }) as unknown as LedgerService,
    network: new LocalNetwork(SELF_PEER),
    nodeSeed: dev1.seed,
    now: clock.now,
    chatPowDifficulty: 2n,
    bindingsPath: ':memory:',
    adminToken,
    logger: pino({ level: 'silent' }),
  });
  const r = services.routes;
  const app = buildApiServer({
    routes: [
      ...providerRoutes(r.providers),
      ...certificateRoutes(r.certificates),
      ...attestationRoutes(r.attestation),
      ...directoryRoutes(r.directory),
      ...chatRoutes(r.chat),
    ],
    logger: pino({ level: 'silent' }),
    adminToken,
    bind: '127.0.0.1',
    allowedHosts: [],
    corsOrigin: 'http://localhost:3000',
    rateLimit: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  return { app, base: `http://127.0.0.1:${address.port}`, services, clock, ledger };
}

async function call(s: Served, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(s.base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : stringifyJson(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (parseJson(text) as JsonValue) : null };
}

function envelope(from = dev6, to = dev7, message = 'hi', timestamp = T) {
  const base = { from: from.address, pub_key: from.publicKey, to: to.address, message, timestamp };
  const id = envelopeId(base);
  return { id, ...base, signature: signEd25519(from.seed, Buffer.from(id, 'hex')), pow_nonce: solvePow(id, 2n) };
}

async function proofQuery(s: Served, key = dev6, withKey = false): Promise<string> {
  const ch = (await call(s, 'GET', '/chat/auth/challenge')).json as Obj;
  const sig = signEd25519(key.seed, chatReadDigest(Buffer.from(ch.challenge as string, 'hex')));
  return `account=${key.address}&challenge=${ch.challenge}&sig=${sig}${withKey ? `&pub_key=${key.publicKey}` : ''}`;
}

/** Reads an SSE body until `until` appears (or 5 s pass). */
async function readStream(res: Response, until: string): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 5000;
  while (!text.includes(until) && Date.now() < deadline) {
    const { value, done } = await Promise.race([
      reader.read(),
      new Promise<{ value: undefined; done: true }>((r) => setTimeout(() => r({ value: undefined, done: true }), 5000)),
    ]);
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

describe('chat routes over HTTP', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(TOKEN);
    const reg = signRegistration(dev7.seed, 'devnet', SELF_PEER, T);
    expect((await call(s, 'POST', '/directory/register', reg)).status).toBe(200);
  });
  afterAll(async () => {
    s.services.stop();
    await s.app.close();
  });

  it('send: 200 {"ok":true,"id"}, 415 without JSON content type, 400 invalid body, 404 unregistered', async () => {
    const e = envelope();
    const ok = await call(s, 'POST', '/chat/send', e);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe(`{"ok":true,"id":"${e.id}"}\n`);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    const dup = await call(s, 'POST', '/chat/send', e);
    expect([dup.status, dup.json]).toEqual([400, { error: 'duplicate envelope' }]);
    const text = await fetch(s.base + '/chat/send', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(text.status).toBe(415);
    expect((await call(s, 'POST', '/chat/send', '{oops')).json).toEqual({ error: 'invalid request body' });
    const lost = await call(s, 'POST', '/chat/send', envelope(dev6, devKey(8)));
    expect([lost.status, lost.json]).toEqual([404, { error: 'recipient not found in directory' }]);
  });

  it('read proof flow: messages with a proof; missing, malformed, foreign, reused, wrong, expired', async () => {
    const q = await proofQuery(s, dev7, true);
    const ok = await call(s, 'GET', `/chat/messages?${q}`);
    expect(ok.status).toBe(200);
    expect((ok.json as Obj[]).map((m) => m.message)).toEqual(['hi']);
    const reused = await call(s, 'GET', `/chat/messages?${q}`);
    expect([reused.status, reused.json]).toEqual([403, { error: 'challenge already used' }]);

    expect((await call(s, 'GET', '/chat/messages')).json).toEqual({ error: 'missing account parameter' });
    const noProof = await call(s, 'GET', `/chat/messages?account=${dev7.address}`);
    expect(noProof.status).toBe(401);
    const malformed = await call(s, 'GET', `/chat/messages?account=${dev7.address}&challenge=zz&sig=${'a'.repeat(128)}`);
    expect([malformed.status, malformed.json]).toEqual([403, { error: 'malformed challenge' }]);
    const wrong = (await proofQuery(s, dev6, false)).replace(`account=${dev6.address}`, `account=${dev7.address}`);
    expect((await call(s, 'GET', `/chat/messages?${wrong}`)).json).toEqual({ error: 'ownership proof failed: signature verification failed' });

    // dev6's key is known from its envelope (§5.4), so no pub_key is needed
    const bound = await call(s, 'GET', `/chat/messages?${await proofQuery(s, dev6, false)}&since=${T}`);
    expect([bound.status, bound.json]).toEqual([200, []]);

    const stale = await proofQuery(s, dev7, true);
    s.clock.advance(120_000_000_001n);
    expect((await call(s, 'GET', `/chat/messages?${stale}`)).json).toEqual({ error: 'challenge expired' });
  });

  it('contacts: public list without account; counterparties with a proof; offset paging', async () => {
    const all = await call(s, 'GET', '/chat/contacts');
    expect(all.json).toEqual([dev6.address, dev7.address].sort());
    expect((await call(s, 'GET', '/chat/contacts?offset=1&limit=1')).json).toEqual([[dev6.address, dev7.address].sort()[1]]);
    const mine = await call(s, 'GET', `/chat/contacts?${await proofQuery(s, dev7, true)}`);
    expect(mine.json).toEqual([dev6.address]);
  });

  it('events: an account stream receives a message sent after it connected', async () => {
    s.clock.ns = T + 1_000_000_000_000n;
    const res = await fetch(`${s.base}/chat/events?${await proofQuery(s, dev7, true)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    const later = envelope(dev6, dev7, 'after connect', s.clock.ns);
    const reading = readStream(res, later.id);
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(s, 'POST', '/chat/send', later)).status).toBe(200);
    const text = await reading;
    expect(text.startsWith(': connected\n\n')).toBe(true);
    expect(text).toContain(`data: ${stringifyJson(later)}\n\n`);
  });

  it('events: unfiltered stream is admin only (401 missing/wrong, 200 with the token)', async () => {
    expect((await call(s, 'GET', '/chat/events')).json).toEqual({ error: 'invalid or missing admin token' });
    expect((await call(s, 'GET', '/chat/events', undefined, { authorization: 'Bearer nope' })).status).toBe(401);
    const res = await fetch(`${s.base}/chat/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await readStream(res, ': connected')).toBe(': connected\n\n');
  });
});

describe('admin matrix without a configured token', () => {
  it('403 operator endpoint disabled', async () => {
    const s = await serve(null);
    const r = await call(s, 'GET', '/chat/events', undefined, { authorization: `Bearer ${TOKEN}` });
    expect([r.status, r.json]).toEqual([403, { error: 'operator endpoint disabled: no admin token configured (set NET_API_ADMIN_TOKEN)' }]);
    s.services.stop();
    await s.app.close();
  });
});

describe('directory, attestation, certificate and provider routes', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(TOKEN);
  });
  afterAll(async () => {
    s.services.stop();
    await s.app.close();
  });

  it('directory: register, lookup, list with cursor, errors', async () => {
    const r6 = signRegistration(dev6.seed, 'devnet', OTHER_PEER, T);
    const r7 = signRegistration(dev7.seed, 'devnet', OTHER_PEER, T);
    for (const r of [r6, r7]) expect((await call(s, 'POST', '/directory/register', r)).text).toBe('{"ok":true}\n');
    expect((await call(s, 'GET', `/directory/${dev6.address}`)).text).toBe(stringifyJson(r6) + '\n');
    const sorted = [r6, r7].sort((a, b) => (a.account < b.account ? -1 : 1));
    const page = await call(s, 'GET', '/directory?limit=1');
    expect(page.json).toEqual([sorted[0]]);
    expect(page.headers.get('x-next-after')).toBe(sorted[0]!.account);
    const next = await call(s, 'GET', `/directory?after=${sorted[0]!.account}`);
    expect(next.json).toEqual([sorted[1]]);
    expect(next.headers.get('x-next-after')).toBeNull();
    expect((await call(s, 'GET', '/directory?after=XYZ')).json).toEqual({ error: 'invalid after' });
    expect((await call(s, 'GET', `/directory/${dev6.address.toUpperCase()}`)).json).toEqual({ error: 'invalid account' });
    expect((await call(s, 'GET', `/directory/${devKey(8).address}`)).json).toEqual({ error: 'account not found in directory' });
    const unopened = signRegistration(devKey(8).seed, 'devnet', OTHER_PEER, T);
    expect((await call(s, 'POST', '/directory/register', unopened)).json).toEqual({ error: 'registration account is not open on the ledger' });
    expect((await call(s, 'POST', '/directory/register', { ...r6, signature: '' })).json).toEqual({ error: 'missing signature' });
  });

  it('attestation: signs a live lease; documented errors', async () => {
    const lease = 'ab'.repeat(32);
    s.ledger.leaseStates.set(lease, 'accepted');
    const ok = await call(s, 'POST', '/attestation/request', { lease_hash: lease });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual(signAttestation(dev1.seed, lease, s.clock.ns));
    s.ledger.leaseStates.set(lease, 'settled');
    expect((await call(s, 'POST', '/attestation/request', { lease_hash: lease })).json).toEqual({
      error: 'lease abababababab... is settled: no attestation-gated transitions remain',
    });
    expect((await call(s, 'POST', '/attestation/request', {})).json).toEqual({ error: 'lease_hash required' });
    expect((await call(s, 'POST', '/attestation/request', { lease_hash: 'ab' })).json).toEqual({ error: 'invalid attestation identifier length: 2' });
    expect((await call(s, 'POST', '/attestation/request', [])).json).toEqual({ error: 'invalid request body' });
  });

  it('certificates and providers answer their 404s and validation errors', async () => {
    expect((await call(s, 'GET', '/certificate')).json).toEqual({ error: 'no performance certificate' });
    expect((await call(s, 'GET', `/certificate/${dev1.address}`)).json).toEqual({ error: 'no certificate for provider' });
    expect((await call(s, 'GET', '/certificate/xyz')).json).toEqual({ error: 'invalid provider address' });
    expect((await call(s, 'GET', `/certificate/hash/${'0'.repeat(64)}`)).json).toEqual({ error: 'no certificate with that hash' });
    expect((await call(s, 'GET', '/certificate/hash/xyz')).json).toEqual({ error: 'invalid certificate hash' });
    expect((await call(s, 'GET', '/providers')).json).toEqual([]);
  });
});
