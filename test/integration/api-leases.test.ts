// Leases end to end through the API of the real daemon (api.md §7.1, §8): dev2 mints XUSD and funds
// dev6 and dev1, dev6 leases from dev1 against dev1's certificate, dev1 accepts with its own
// attestation — then the lease reads, reputation, and the VM and tunnel checks of a node that
// runs no VMs, in their documented order.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { signAttestation } from '../../ledger/crypto/attestation.js';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { leaseCost, leaseStake } from '../../ledger/state/lease-math.js';
import { emptyBlock, type Block } from '../../ledger/types.js';
import { startDevNode, type ApiResponse, type DevNode } from './harness.js';
import { devKey, finishBlock, nowNsExact, receiveBlock, sendBlock, type DevKey } from './dev-blocks.js';
import { DEVNET_LEDGER_GENESIS_HASH } from '../../ledger/genesis/devnet.js';

const dev1 = devKey(1);
const dev2 = devKey(2);
const dev6 = devKey(6);
const dev9 = devKey(9);
const MINTED = 1_000_000_000n;
const FUNDING = 100_000_000n;
const DIMS = { vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 300n };

let node: DevNode;
const frontier: Record<string, string> = {};
const xusd: Record<string, bigint> = {};

function obj(res: ApiResponse): Record<string, JsonValue> {
  if (!isJsonObject(res.json)) throw new Error(`expected a JSON object, got ${res.status} ${res.text}`);
  return res.json;
}

async function submit(type: string, block: Block, key: DevKey): Promise<string> {
  const json = finishBlock(block, key);
  const res = await node.api.post(`/blocks/${type}`, json);
  if (res.status !== 201) throw new Error(`${type} rejected: ${res.status} ${res.text}`);
  frontier[key.address] = json.hash as string;
  return json.hash as string;
}

function xusdBlock(type: Block['type'], key: DevKey, fields: Partial<Block>): Block {
  return { ...emptyBlock(type), account: key.address, previous: frontier[key.address] ?? '0', asset: 'XUSD', timestamp: nowNsExact(), ...fields };
}

async function lease(accessKey: string, certificate: { hash: string; multiplier: bigint }): Promise<{ hash: string; cost: bigint }> {
  const cost = leaseCost(DIMS, certificate.multiplier);
  xusd[dev6.address]! -= cost;
  const hash = await submit(
    'lease',
    xusdBlock('lease', dev6, {
      ...DIMS,
      destination: dev1.address,
      amount: cost,
      balance: xusd[dev6.address]!,
      access_pub_key: accessKey,
      certificate_hash: certificate.hash,
    }),
    dev6,
  );
  return { hash, cost };
}

async function accept(leaseHash: string, cost: bigint, certificateHash: string): Promise<void> {
  const stake = leaseStake(cost, 5n);
  xusd[dev1.address]! -= stake;
  await submit(
    'lease_accept',
    xusdBlock('lease_accept', dev1, {
      source: leaseHash,
      amount: stake,
      balance: xusd[dev1.address]!,
      certificate_hash: certificateHash,
      attestations: [signAttestation(dev1.seed, leaseHash, nowNsExact())],
      locked_r: 2000n,
    }),
    dev1,
  );
}

let certificate: { hash: string; multiplier: bigint };
let withKey: { hash: string; cost: bigint };
let withoutKey: { hash: string; cost: bigint };

beforeAll(async () => {
  node = await startDevNode();
  frontier[dev1.address] = DEVNET_LEDGER_GENESIS_HASH;
  // XUSD: dev2 mints, funds dev6 (consumer) and dev1 (provider stake).
  await submit('mint', xusdBlock('mint', dev2, { amount: MINTED, balance: MINTED, pub_key: dev2.publicKey }), dev2);
  const toDev6 = await submit('send', sendBlock(dev2, { previous: frontier[dev2.address]!, balanceAfter: MINTED - FUNDING, to: dev6.address, amount: FUNDING, timestamp: nowNsExact(), asset: 'XUSD' }), dev2);
  const toDev1 = await submit('send', sendBlock(dev2, { previous: frontier[dev2.address]!, balanceAfter: MINTED - 2n * FUNDING, to: dev1.address, amount: FUNDING, timestamp: nowNsExact(), asset: 'XUSD' }), dev2);
  await submit('receive', receiveBlock(dev6, { previous: '0', balanceAfter: FUNDING, source: toDev6, timestamp: nowNsExact(), asset: 'XUSD' }), dev6);
  await submit('receive', receiveBlock(dev1, { previous: frontier[dev1.address]!, balanceAfter: FUNDING, source: toDev1, timestamp: nowNsExact(), asset: 'XUSD' }), dev1);
  xusd[dev6.address] = FUNDING;
  xusd[dev1.address] = FUNDING;

  // --dev issues dev1's certificate at start (a worker runs the benchmark).
  for (let i = 0; ; i++) {
    const res = await node.api.get(`/certificate/${dev1.address}`);
    if (res.status === 200) {
      const c = obj(res);
      certificate = { hash: c.hash as string, multiplier: c.price_multiplier_milli as bigint };
      break;
    }
    if (i > 150) throw new Error(`no certificate for dev1: ${res.text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  withKey = await lease(dev9.publicKey, certificate);
});

afterAll(async () => {
  await node?.stop();
});

describe('a created lease', () => {
  it('is served by /leases/{hash}, /leases?state= and as an escrow pending to the provider', async () => {
    const l = obj(await node.api.get(`/leases/${withKey.hash}`));
    expect(l).toMatchObject({
      lease_hash: withKey.hash,
      state: 'created',
      consumer: dev6.address,
      provider: dev1.address,
      ...DIMS,
      access_pub_key: dev9.publicKey,
      cost: withKey.cost,
      stake: 0n,
      start_time: 0n,
      certificate_hash: certificate.hash,
      settled: false,
      renewals: [],
      expires_at: 0n,
    });
    expect(((await node.api.get('/leases?state=created')).json as JsonValue[]).length).toBe(1);
    expect((await node.api.get('/leases?state=accepted')).json).toEqual([]);
    const pending = obj(await node.api.get(`/pending/${dev1.address}`)).pending as Record<string, JsonValue>[];
    expect(pending.map((p) => [p.send_hash, p.amount, p.asset])).toEqual([[withKey.hash, withKey.cost, 'XUSD']]);
  });

  it('has no VM here (this node is the provider, running none) and no tunnel: 410 lease not active', async () => {
    const vm = await node.api.get(`/vms/${withKey.hash}`);
    expect({ status: vm.status, body: vm.json }).toEqual({ status: 404, body: { error: 'vm not found' } });
    const t = await node.api.request('POST', `/tunnel/${withKey.hash}/tcp`, { headers: { 'X-Signature': 'ab' } });
    expect({ status: t.status, body: t.json }).toEqual({ status: 410, body: { error: 'lease not active' } });
  });
});

describe('an accepted lease', () => {
  beforeAll(async () => {
    await accept(withKey.hash, withKey.cost, certificate.hash);
    withoutKey = await lease('', certificate);
    await accept(withoutKey.hash, withoutKey.cost, certificate.hash);
  });

  it('is reported accepted with its stake, start time and expiry, and counts in reputation', async () => {
    const l = obj(await node.api.get(`/leases/${withKey.hash}`));
    expect(l.state).toBe('accepted');
    expect(l.stake).toBe(leaseStake(withKey.cost, 5n));
    expect(typeof l.start_time === 'bigint' && l.start_time > 0n).toBe(true);
    expect(l.expires_at).toBe((l.start_time as bigint) + DIMS.duration * 1_000_000_000n);
    expect(((await node.api.get('/leases?state=accepted&limit=1')).json as JsonValue[]).length).toBe(1);
    expect(((await node.api.get('/leases?state=accepted&offset=1')).json as JsonValue[]).length).toBe(1);
    const rep = obj(await node.api.get(`/accounts/${dev1.address}/reputation`));
    expect(rep.leases_accepted_as_provider).toBe(2n);
    const all = obj(await node.api.get('/reputation'));
    expect(Object.keys(all).sort()).toEqual([dev1.address, dev6.address].sort());
  });

  it('runs the tunnel checks in order: key, header, signature, then the relay', async () => {
    const post = (hash: string, headers: Record<string, string> = {}) =>
      node.api.request('POST', `/tunnel/${hash}/tcp`, { headers }).then((r) => ({ status: r.status, body: r.json }));
    expect(await post(withoutKey.hash)).toEqual({ status: 403, body: { error: 'lease has no access key' } });
    expect(await post(withKey.hash)).toEqual({ status: 401, body: { error: 'missing X-Signature header' } });
    expect(await post(withKey.hash, { 'X-Signature': 'zz' })).toEqual({ status: 403, body: { error: 'signature verification failed' } });
    const byConsumer = signEd25519(dev6.seed, Buffer.from(withKey.hash, 'hex'));
    expect(await post(withKey.hash, { 'X-Signature': byConsumer })).toEqual({ status: 403, body: { error: 'signature verification failed' } });
    const byAccessKey = signEd25519(dev9.seed, Buffer.from(withKey.hash, 'hex'));
    expect(await post(withKey.hash, { 'X-Signature': byAccessKey.toUpperCase() })).toEqual({ status: 403, body: { error: 'signature verification failed' } });
    expect(await post(withKey.hash, { 'X-Signature': byAccessKey })).toEqual({ status: 502, body: { error: 'tunnel error: vm not found' } });
  });

  it('has no VM record on this node', async () => {
    const vm = await node.api.get(`/vms/${withKey.hash}`);
    expect({ status: vm.status, body: vm.json }).toEqual({ status: 404, body: { error: 'vm not found' } });
    expect((await node.api.get('/vms')).json).toEqual([]);
  });
});
