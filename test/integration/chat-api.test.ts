// Chat, directory, attestation and certificate routes against the real daemon (`netnode node --dev`),
// black-box over HTTP; plus the challenge expiry on an in-process node (real ledger, real API server,
// real services) whose clock the test controls.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { isJsonObject, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { solvePow } from '../../ledger/crypto/pow.js';
import { verifyAttestation } from '../../ledger/crypto/attestation.js';
import { checkCertificateContent, parseCertificateJson } from '../../ledger/certificates/codec.js';
import { leaseCost } from '../../ledger/state/lease-math.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS } from '../../ledger/genesis/devnet.js';
import { openLedger } from '../../ledger/ledger.js';
import { openDatabase } from '../../ledger/store/db.js';
import { envelopeId } from '../../agent/chat/envelope.js';
import { chatReadDigest } from '../../agent/chat/read-auth.js';
import { signRegistration } from '../../agent/directory/registration.js';
import { endIdentifier } from '../../agent/directory/store.js';
import { peerIdFromEd25519PublicKey } from '../../agent/network/peer-id.js';
import { LocalNetwork } from '../../agent/network/local.js';
import { createPeerServices } from '../../agent/peer-services.js';
import { buildApiServer } from '../../agent/api/server.js';
import { chatRoutes } from '../../agent/api/chat.js';
import { NodeClient } from '../../agent/client/node-client.js';
import { AccountClient } from '../../agent/wallet/account-client.js';
import { buildLease, buildMint, buildReceive, buildSend, nowNs } from '../../agent/wallet/builders.js';
import { startDevNode, type ApiResponse, type DevNode } from './harness.js';
import { devKey, type DevKey } from './dev-blocks.js';

type Obj = { [key: string]: JsonValue };
const TOKEN = 'chat-admin-token';
const CHAT_DIFFICULTY = 2n; // devnet
const [dev1, dev2, dev6, dev7, dev9] = [devKey(1), devKey(2), devKey(6), devKey(7), devKey(9)];
const ELSEWHERE = peerIdFromEd25519PublicKey(devKey(5).publicKey);

function obj(res: ApiResponse): Obj {
  if (!isJsonObject(res.json)) throw new Error(`expected a JSON object, got ${res.status} ${res.text}`);
  return res.json;
}

function envelope(from: DevKey, to: DevKey, message: string, timestamp = nowNs()) {
  const base = { from: from.address, pub_key: from.publicKey, to: to.address, message, timestamp };
  const id = envelopeId(base);
  return { id, ...base, signature: signEd25519(from.seed, Buffer.from(id, 'hex')), pow_nonce: solvePow(id, CHAT_DIFFICULTY) };
}

async function proof(node: DevNode, key: DevKey, opts: { pubKey?: boolean; signer?: DevKey } = {}): Promise<string> {
  const ch = obj(await node.api.get('/chat/auth/challenge'));
  const sig = signEd25519((opts.signer ?? key).seed, chatReadDigest(Buffer.from(ch.challenge as string, 'hex')));
  return `account=${key.address}&challenge=${ch.challenge}&sig=${sig}${opts.pubKey ? `&pub_key=${key.publicKey}` : ''}`;
}

function account(node: DevNode, key: DevKey): AccountClient {
  return new AccountClient(new NodeClient(node.api.baseUrl), key.seed, key.address, key.publicKey);
}

/** dev1 sends XE to `key`, which receives it: the account is open on the ledger. */
async function openAccount(node: DevNode, key: DevKey): Promise<void> {
  const send = await account(node, dev1).submit((st) => buildSend(st, { to: key.address, amount: 1_000_000n, asset: 'XE' }, nowNs()));
  const owner = account(node, key);
  await owner.submit((st) => buildReceive(st, { send_hash: send.hash, source: dev1.address, destination: key.address, amount: 1_000_000n, asset: 'XE', timestamp: send.timestamp }, nowNs()));
}

/** An open SSE stream: collects the body text as it arrives. */
interface Stream {
  res: IncomingMessage;
  text(): string;
  waitFor(s: string, ms?: number): Promise<string>;
  close(): void;
}

function openStream(node: DevNode, path: string, headers: Record<string, string> = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: node.apiPort, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      resolve({
        res,
        text: () => body,
        async waitFor(s, ms = 5000) {
          const deadline = Date.now() + ms;
          while (!body.includes(s) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          return body;
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('netnode --dev with an admin token', () => {
  let node: DevNode;
  let peerId: string;

  beforeAll(async () => {
    node = await startDevNode({ env: { NET_API_ADMIN_TOKEN: TOKEN } });
    peerId = obj(await node.api.get('/node')).id as string;
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
  });

  it('GET /certificate answers dev1’s devnet certificate (issued at start)', async () => {
    let res = await node.api.get('/certificate');
    for (let i = 0; i < 300 && res.status === 404; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await node.api.get('/certificate');
    }
    expect(res.status).toBe(200);
    const cert = parseCertificateJson(res.json!);
    checkCertificateContent(cert, 'devnet', 1_000_000n);
    expect(cert.provider).toBe(dev1.address);
    expect(cert.expires_at - cert.issued_at).toBe(604_800_000_000_000n);
    expect((await node.api.get(`/certificate/${dev1.address}`)).text).toBe(res.text);
    expect((await node.api.get(`/certificate/hash/${cert.hash}`)).text).toBe(res.text);
    expect(obj(await node.api.get(`/certificate/${dev6.address}`))).toEqual({ error: 'no certificate for provider' });
  });

  it('directory: the node registered its own account; register, lookup, list, errors', async () => {
    const own = obj(await node.api.get(`/directory/${dev1.address}`));
    expect(own.node_peer).toBe(peerId);

    const unopened = signRegistration(dev6.seed, 'devnet', ELSEWHERE, nowNs());
    const refused = await node.api.post('/directory/register', unopened);
    expect([refused.status, refused.json]).toEqual([400, { error: 'registration account is not open on the ledger' }]);

    await openAccount(node, dev6);
    const reg = signRegistration(dev6.seed, 'devnet', ELSEWHERE, nowNs());
    const ok = await node.api.post('/directory/register', reg);
    expect([ok.status, ok.text]).toEqual([200, '{"ok":true}\n']);
    expect((await node.api.get(`/directory/${dev6.address}`)).text).toBe(stringifyJson(reg) + '\n');
    // an older registration is ignored, still 200
    const older = signRegistration(dev6.seed, 'devnet', peerId, reg.timestamp - 1n);
    expect((await node.api.post('/directory/register', older)).status).toBe(200);
    expect(obj(await node.api.get(`/directory/${dev6.address}`)).node_peer).toBe(ELSEWHERE);

    const sorted = [dev1.address, dev6.address].sort();
    const page = await node.api.get('/directory?limit=1');
    expect((page.json as Obj[]).map((r) => r.account)).toEqual([sorted[0]]);
    expect(page.headers['x-next-after']).toBe(sorted[0]);
    const rest = await node.api.get(`/directory?after=${sorted[0]}`);
    expect((rest.json as Obj[]).map((r) => r.account)).toEqual([sorted[1]]);
    expect(rest.headers['x-next-after']).toBeUndefined();

    for (const [body, error] of [
      [{ ...reg, signature: undefined }, 'missing signature'],
      [{ ...reg, pub_key: dev7.publicKey }, `registration key: public key does not derive account ${dev6.address}`],
      [{ ...reg, node_peer: peerId }, 'signature verification failed'],
      [{ ...reg, timestamp: 'soon' }, 'invalid request body'],
      [signRegistration(dev6.seed, 'devnet', ELSEWHERE, nowNs() + 600_000_000_000n), 'registration timestamp is in the future'],
    ] as const) {
      expect(obj(await node.api.post('/directory/register', body))).toEqual({ error });
    }
    expect(obj(await node.api.get('/directory/ABC'))).toEqual({ error: 'invalid account' });
    expect(obj(await node.api.get(`/directory/${dev7.address}`))).toEqual({ error: 'account not found in directory' });
    expect((await node.api.post('/directory/register', '{}', { 'Content-Type': 'text/plain' })).status).toBe(415);
  });

  it('chat send: stored for a local recipient, 404 unregistered, 502 for a recipient served elsewhere', async () => {
    const e = envelope(dev7, dev1, 'hello dev1 — ✓');
    const ok = await node.api.post('/chat/send', e);
    expect([ok.status, ok.text]).toEqual([200, `{"ok":true,"id":"${e.id}"}\n`]);
    expect(obj(await node.api.post('/chat/send', e))).toEqual({ error: 'duplicate envelope' });
    expect(obj(await node.api.post('/chat/send', envelope(dev1, devKey(8), 'x')))).toEqual({ error: 'recipient not found in directory' });
    const relayed = await node.api.post('/chat/send', envelope(dev1, dev6, 'to elsewhere'));
    expect(relayed.status).toBe(502);
    expect((obj(relayed).error as string).startsWith(`send chat: msg: open stream to ${ELSEWHERE}: `)).toBe(true);
    expect(obj(await node.api.post('/chat/send', { ...e, id: undefined, message: 'changed' }))).toEqual({
      error: 'invalid envelope: envelope ID mismatch',
    });
    expect(obj(await node.api.post('/chat/send', envelope(dev7, dev1, 'stale', nowNs() - 400_000_000_000n)))).toEqual({
      error: 'invalid envelope: envelope timestamp outside freshness window',
    });
    expect(obj(await node.api.post('/chat/send', { ...e, signature: '' }))).toEqual({
      error: 'chat send requires a signed envelope (from + pub_key + signature)',
    });
  });

  it('read proofs: messages with a valid proof; missing, malformed, reused, wrong, key not derivable', async () => {
    const q = await proof(node, dev1); // dev1's key comes from the ledger
    const read = await node.api.get(`/chat/messages?${q}`);
    expect(read.status).toBe(200);
    expect((read.json as Obj[]).map((m) => m.message)).toEqual(['hello dev1 — ✓']);
    expect(obj(await node.api.get(`/chat/messages?${q}`))).toEqual({ error: 'challenge already used' });

    const none = await node.api.get(`/chat/messages?account=${dev1.address}`);
    expect([none.status, obj(none).error]).toEqual([401, 'chat read requires an ownership proof (challenge + sig); GET /chat/auth/challenge first']);
    expect(obj(await node.api.get('/chat/messages'))).toEqual({ error: 'missing account parameter' });
    expect(obj(await node.api.get(`/chat/messages?account=${dev1.address}&challenge=00&sig=00`))).toEqual({ error: 'malformed challenge' });
    const foreign = `account=${dev1.address}&challenge=${'0'.repeat(112)}&sig=${'0'.repeat(128)}`;
    expect(obj(await node.api.get(`/chat/messages?${foreign}`))).toEqual({ error: 'challenge not issued by this node' });
    const wrong = await node.api.get(`/chat/messages?${await proof(node, dev1, { signer: dev6 })}`);
    expect([wrong.status, wrong.json]).toEqual([403, { error: 'ownership proof failed: signature verification failed' }]);
    const unknown = devKey(8);
    expect(obj(await node.api.get(`/chat/messages?${await proof(node, unknown)}`))).toEqual({
      error: `ownership proof key: no public key known for account ${unknown.address}`,
    });
    // dev7 never opened an account, but its verified envelope bound its key (§5.4)
    expect((await node.api.get(`/chat/messages?${await proof(node, dev7)}`)).status).toBe(200);
    const since = await node.api.get(`/chat/messages?${await proof(node, dev1, { pubKey: true })}&since=${nowNs()}`);
    expect(since.json).toEqual([]);

    expect((await node.api.get('/chat/contacts')).json).toEqual([dev1.address, dev7.address].sort());
    expect((await node.api.get(`/chat/contacts?${await proof(node, dev1)}`)).json).toEqual([dev7.address]);
  });

  it('an account’s event stream receives a message sent after it connected', async () => {
    const stream = await openStream(node, `/chat/events?${await proof(node, dev1)}`);
    expect(stream.res.statusCode).toBe(200);
    expect(stream.res.headers['content-type']).toBe('text/event-stream');
    expect(stream.res.headers['cache-control']).toBe('no-cache');
    expect(await stream.waitFor(': connected\n\n')).toBe(': connected\n\n');
    const e = envelope(dev7, dev1, 'live');
    expect((await node.api.post('/chat/send', e)).status).toBe(200);
    const text = await stream.waitFor(e.id);
    expect(text).toBe(`: connected\n\ndata: ${stringifyJson(e)}\n\n`);
    stream.close();
  });

  it('the unfiltered stream: 401 without or with a wrong token, 200 with it', async () => {
    const missing = await node.api.get('/chat/events');
    expect([missing.status, missing.json]).toEqual([401, { error: 'invalid or missing admin token' }]);
    expect((await node.api.get('/chat/events', { Authorization: 'Bearer wrong' })).status).toBe(401);
    const stream = await openStream(node, '/chat/events', { Authorization: `Bearer ${TOKEN}` });
    expect(stream.res.statusCode).toBe(200);
    await stream.waitFor(': connected');
    const e = envelope(dev6, dev1, 'firehose');
    await node.api.post('/chat/send', e);
    expect(await stream.waitFor(e.id)).toContain(`data: ${stringifyJson(e)}\n\n`);
    stream.close();
  });

  it('at most 8 event streams per client: the 9th answers 429 with Retry-After; closing one frees a slot', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    // streams closed by earlier tests may take a moment to be noticed by the server
    await new Promise((r) => setTimeout(r, 200));
    const streams: Stream[] = [];
    for (let i = 0; i < 8; i++) {
      const s = await openStream(node, '/chat/events', auth);
      expect(s.res.statusCode).toBe(200);
      streams.push(s);
    }
    const over = await node.api.get('/chat/events', auth);
    expect([over.status, over.json]).toEqual([429, { error: 'too many event streams' }]);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    streams.pop()!.close();
    let again = await openStream(node, '/chat/events', auth);
    for (let i = 0; i < 50 && again.res.statusCode === 429; i++) {
      again.close();
      await new Promise((r) => setTimeout(r, 50));
      again = await openStream(node, '/chat/events', auth);
    }
    expect(again.res.statusCode).toBe(200);
    for (const s of [...streams, again]) s.close();
  });

  it('POST /attestation/request: a live lease, a registered provider’s identifiers, and the documented errors', async () => {
    const consumer = account(node, dev2); // dev2 is the devnet minter
    await consumer.submit((st) => buildMint(st, 100_000_000n, nowNs()));
    const cert = parseCertificateJson((await node.api.get('/certificate')).json!);
    const dims = { vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 300n };
    const lease = await consumer.submit((st) =>
      buildLease(st, { provider: dev1.address, ...dims, accessPubKey: dev9.publicKey, certificateHash: cert.hash, cost: leaseCost(dims, cert.price_multiplier_milli) }, nowNs()),
    );
    const before = nowNs();
    const res = await node.api.post('/attestation/request', { lease_hash: lease.hash });
    expect(res.status).toBe(200);
    const a = obj(res);
    expect(a.public_key).toBe(dev1.publicKey);
    expect(a.timestamp as bigint).toBeGreaterThanOrEqual(before);
    expect(verifyAttestation({ public_key: a.public_key as string, timestamp: a.timestamp as bigint, signature: a.signature as string }, lease.hash)).toBe(true);

    for (const id of [dev1.address, endIdentifier(dev1.address)]) {
      expect((await node.api.post('/attestation/request', { lease_hash: id })).status).toBe(200);
    }
    const stranger = 'ab'.repeat(32);
    for (const [body, error] of [
      [{}, 'lease_hash required'],
      [{ lease_hash: 'abc' }, 'invalid attestation identifier length: 3'],
      [{ lease_hash: stranger.toUpperCase() }, 'invalid attestation identifier'],
      [{ lease_hash: stranger }, 'unknown attestation identifier abababababab...: not a live lease or a registered provider'],
      [{ lease_hash: 7 }, 'invalid request body'],
    ] as const) {
      const r = await node.api.post('/attestation/request', body);
      expect([r.status, r.json]).toEqual([400, { error }]);
    }
  });
});

describe('netnode --dev without an admin token', () => {
  it('the unfiltered stream answers 403 operator endpoint disabled', async () => {
    const node = await startDevNode();
    try {
      const r = await node.api.get('/chat/events', { Authorization: `Bearer ${TOKEN}` });
      expect([r.status, r.json]).toEqual([403, { error: 'operator endpoint disabled: no admin token configured (set NET_API_ADMIN_TOKEN)' }]);
    } finally {
      await node.stop();
    }
  }, 60_000);
});

describe('challenge expiry (in-process node: real ledger and API server, injected clock)', () => {
  it('a proof is accepted up to expires_at and refused one nanosecond later', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chat-clock-'));
    let clock = nowNs();
    const now = () => clock;
    const db = openDatabase(join(dir, 'node.db'));
    const ledger = openLedger({
      db,
      genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS },
      powDifficulty: CHAT_DIFFICULTY,
      identitySeed: dev1.seed,
      stabilityWindowNs: 0n,
      certificateIterations: 1_000_000n,
      now,
    });
    const services = createPeerServices({
      ledger,
      network: new LocalNetwork(peerIdFromEd25519PublicKey(dev1.publicKey)),
      nodeSeed: dev1.seed,
      now,
      chatPowDifficulty: CHAT_DIFFICULTY,
      bindingsPath: join(dir, 'key-bindings.db'),
      adminToken: null,
      logger: pino({ level: 'silent' }),
    });
    const app = buildApiServer({
      routes: chatRoutes(services.routes.chat),
      logger: pino({ level: 'silent' }),
      adminToken: null,
      bind: '127.0.0.1',
      allowedHosts: [],
      corsOrigin: '*',
      rateLimit: false,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const client = new NodeClient(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
    try {
      const challenge = async (): Promise<{ q: string; expiresAt: bigint }> => {
        const ch = (await client.get('/chat/auth/challenge')) as Obj;
        const sig = signEd25519(dev1.seed, chatReadDigest(Buffer.from(ch.challenge as string, 'hex')));
        return { q: `account=${dev1.address}&challenge=${ch.challenge}&sig=${sig}`, expiresAt: ch.expires_at as bigint };
      };
      const first = await challenge();
      const second = await challenge();
      expect(first.expiresAt).toBe(clock + 120_000_000_000n);
      clock = first.expiresAt;
      expect((await client.request('GET', `/chat/messages?${first.q}`)).status).toBe(200);
      clock = second.expiresAt + 1n;
      const late = await client.request('GET', `/chat/messages?${second.q}`);
      expect([late.status, late.body]).toEqual([403, { error: 'challenge expired' }]);
    } finally {
      await app.close();
      services.stop();
      ledger.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
