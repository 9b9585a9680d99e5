// GET /vms and GET /vms/{leaseHash} with the provider's records (agent/api/vm-records.ts) on the real
// API server: credentials only with the admin token or a valid, single-use VM read proof by the
// lease's access key (api.md §8.1–§8.2, chat-and-directory.md §5.5); everything else hides them.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer } from '../../agent/api/server.js';
import { providerVmHandlers } from '../../agent/api/vm-records.js';
import { vmRoutes } from '../../agent/api/vms.js';
import { chatReadDigest, ReadAuth, vmReadDigest } from '../../agent/chat/read-auth.js';
import { parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import type { LeaseFacts } from '../../provisioning/lease-view.js';
import { VmRecords, type VmRecord } from '../../provisioning/records.js';

const TOKEN = 'vm-admin-token';
const LEASE = '5e'.repeat(32);
const OTHER = '6f'.repeat(32);
const accessSeed = new Uint8Array(randomBytes(32));
const otherSeed = new Uint8Array(randomBytes(32));

type Obj = Record<string, JsonValue>;

describe('VM routes with provider records', () => {
  let app: FastifyInstance;
  let base: string;
  let dir: string;
  let readAuth: ReadAuth;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netnode-vm-api-'));
    const records = new VmRecords(new Database(join(dir, 'node.db')));
    const rec: VmRecord = {
      leaseHash: LEASE, backend: 'docker', backendId: 'abc', status: 'running', error: '',
      resources: { vcpus: 1, memoryMb: 1024, diskGb: 10 },
      credentials: { username: 'net-0badc0de', password: 'Pw0123456789abcdefABCDEF' },
      createdAt: 1_800_000_015_000_000_000n, ssh: { host: '127.0.0.1', port: 40022 }, endedAt: null,
    };
    records.put(rec);
    const lease: LeaseFacts = {
      leaseHash: LEASE, state: 'accepted', vcpus: 1, memoryMb: 1024, diskGb: 10,
      accessPubKey: publicKeyFromSeed(accessSeed), expiresAt: 0n, settleGraceNs: 0n,
    };
    readAuth = new ReadAuth({ now: () => BigInt(Date.now()) * 1_000_000n });
    const handlers = providerVmHandlers({
      records,
      leases: { get: (h) => (h === LEASE ? lease : null) },
      adminToken: TOKEN,
      verifyVmReadProof: (key, challenge, sig) => readAuth.verifyVmReadProof(key, challenge, sig),
    });
    const { list, get } = vmRoutes({
      ledger: { lease: () => null },
      ownAddress: 'a'.repeat(64),
      now: () => 0n,
      handlers,
    });
    app = buildApiServer({
      routes: [list, get],
      logger: pino({ level: 'silent' }),
      adminToken: TOKEN,
      bind: '127.0.0.1',
      allowedHosts: [],
      corsOrigin: 'http://localhost:3000',
      rateLimit: false,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; json: JsonValue }> {
    const res = await fetch(base + path, { headers });
    return { status: res.status, json: parseJson(await res.text()) as JsonValue };
  }

  function proof(seed: Uint8Array, digest = vmReadDigest): string {
    const { challenge } = readAuth.issue();
    return `challenge=${challenge}&sig=${signEd25519(seed, digest(Buffer.from(challenge, 'hex')))}`;
  }

  it('lists records; credentials only with the admin token', async () => {
    const plain = await get('/vms');
    expect(plain.status).toBe(200);
    expect(plain.json).toEqual([{
      lease_hash: LEASE, status: 'running', resources: { vcpus: 1n, memory_mb: 1024n, disk_gb: 10n },
      created_at: 1_800_000_015_000_000_000n, error: '',
    }]);
    const admin = await get('/vms', { authorization: `Bearer ${TOKEN}` });
    expect(((admin.json as Obj[])[0]!.credentials as Obj).password).toBe('Pw0123456789abcdefABCDEF');
    const wrong = await get('/vms', { authorization: 'Bearer nope' });
    expect((wrong.json as Obj[])[0]!.credentials).toBeUndefined();
  });

  it('shows one record; credentials with the admin token or a valid VM read proof', async () => {
    expect(((await get(`/vms/${LEASE}`)).json as Obj).credentials).toBeUndefined();
    expect(((await get(`/vms/${LEASE}`, { authorization: `Bearer ${TOKEN}` })).json as Obj).credentials)
      .toEqual({ username: 'net-0badc0de', password: 'Pw0123456789abcdefABCDEF' });
    const q = proof(accessSeed);
    const withProof = await get(`/vms/${LEASE}?${q}`);
    expect(withProof.status).toBe(200);
    expect((withProof.json as Obj).credentials).toEqual({ username: 'net-0badc0de', password: 'Pw0123456789abcdefABCDEF' });
    // Single use: the same proof again only hides them.
    const replay = await get(`/vms/${LEASE}?${q}`);
    expect(replay.status).toBe(200);
    expect((replay.json as Obj).credentials).toBeUndefined();
  });

  it('hides credentials for a proof by another key, a chat-tagged proof, or a malformed one', async () => {
    for (const q of [proof(otherSeed), proof(accessSeed, chatReadDigest), 'challenge=zz&sig=00', `sig=${'0'.repeat(128)}`]) {
      const r = await get(`/vms/${LEASE}?${q}`);
      expect(r.status).toBe(200);
      expect((r.json as Obj).credentials, q).toBeUndefined();
    }
  });

  it('answers 400 for a malformed hash and 404 vm not found for a lease without a VM here', async () => {
    expect(await get('/vms/XYZ')).toEqual({ status: 400, json: { error: 'invalid lease hash' } });
    expect(await get(`/vms/${OTHER}`)).toEqual({ status: 404, json: { error: 'vm not found' } });
  });
});
