import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBlockJson, verifyBlockIntrinsics } from '../../ledger/codec/block.js';
import { parseJson, type JsonValue } from '../../ledger/codec/json.js';
import { finishBlock } from '../../ledger/crypto/block-signer.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { devSeed } from '../../ledger/genesis/devnet.js';
import type { Block } from '../../ledger/types.js';
import { formatAmount, parseAmount, parseDurationSeconds } from '../../agent/wallet/amounts.js';
import { buildLease, buildMint, buildReceive, buildSend, type AccountState } from '../../agent/wallet/builders.js';
import { Wallet } from '../../agent/wallet/wallet.js';

const vectors = parseJson(readFileSync(join(import.meta.dirname, '../fixtures/net-vectors.json'), 'utf8')) as Record<string, JsonValue>;
function vectorBlock(name: string): Block {
  const v = (vectors.block_vectors as Record<string, JsonValue>[]).find((b) => b.name === name && b.network_id === 'devnet')!;
  return parseBlockJson(v.block);
}

describe('amounts', () => {
  it('parses decimal units with up to 6 places', () => {
    expect(parseAmount('1')).toBe(1_000_000n);
    expect(parseAmount('12.5')).toBe(12_500_000n);
    expect(parseAmount('0.000001')).toBe(1n);
    expect(parseAmount('42000000')).toBe(42_000_000_000_000n);
  });
  it('rejects what it cannot represent, with a clear message', () => {
    for (const bad of ['', '-1', '1.0000001', '1e6', 'abc', '01', '.5']) {
      expect(() => parseAmount(bad)).toThrow(/invalid amount/);
    }
    expect(() => parseAmount('18446744073709.551616')).toThrow(/too large/);
  });
  it('formats micro-units back to decimal', () => {
    expect(formatAmount(12_500_000n)).toBe('12.5');
    expect(formatAmount(1n)).toBe('0.000001');
    expect(formatAmount(0n)).toBe('0');
  });
  it('parses lease durations', () => {
    expect(parseDurationSeconds('300')).toBe(300n);
    expect(parseDurationSeconds('5m')).toBe(300n);
    expect(parseDurationSeconds('1h')).toBe(3600n);
    expect(() => parseDurationSeconds('5 minutes')).toThrow(/invalid duration/);
  });
});

describe('wallet files', () => {
  it('creates 0600 key files and never overwrites an account key', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'wallet-')), 'w');
    const w = Wallet.create(dir);
    expect(statSync(join(dir, 'account.key')).mode & 0o777).toBe(0o600);
    expect(() => Wallet.create(dir)).toThrow(/already exists/);
    expect(Wallet.open(dir).address).toBe(w.address);
    const access = w.newAccessSeed();
    const file = w.saveAccessSeed('ab'.repeat(32), access);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(w.accessSeed('ab'.repeat(32)))).toEqual(Buffer.from(access));
    expect(publicKeyFromSeed(access)).not.toBe(w.publicKey);
  });
});

describe('block builders reproduce the protocol vectors', () => {
  const dev = (n: number): { address: string; publicKey: string } => {
    const w = Wallet.dev(n, tmpdir());
    return { address: w.address, publicKey: w.publicKey };
  };
  const finish = (b: Block, seed: Uint8Array): Block => finishBlock(b, { networkId: 'devnet', difficulty: 0n, seed });

  it('send: dev1 → dev6 with memo', () => {
    const v = vectorBlock('send_xe_with_memo');
    const st: AccountState = { ...dev(1), frontier: v.previous, balances: { XE: v.balance + v.amount } };
    const b = finish(buildSend(st, { to: v.destination, amount: v.amount, asset: 'XE', memo: v.memo }, v.timestamp), devSeed(1));
    expect(b.hash).toBe(v.hash);
    expect(b.signature).toBe(v.signature);
    verifyBlockIntrinsics(b, 'devnet');
  });

  it('opening receive declares the key', () => {
    const v = vectorBlock('open_receive_declares_key');
    const st: AccountState = { ...dev(6), frontier: null, balances: {} };
    const pending = { send_hash: v.source, source: '', destination: v.account, amount: v.balance, asset: 'XE', timestamp: 0n };
    const b = finish({ ...buildReceive(st, pending, v.timestamp), representative: v.representative }, devSeed(6));
    expect(b.pub_key).toBe(v.pub_key);
    expect(b.hash).toBe(v.hash);
    verifyBlockIntrinsics(b, 'devnet');
  });

  it('opening mint by the minter', () => {
    const v = vectorBlock('mint_open_declares_key');
    const b = finish(buildMint({ ...dev(2), frontier: null, balances: {} }, v.amount, v.timestamp), devSeed(2));
    expect(b.hash).toBe(v.hash);
    expect(b.signature).toBe(v.signature);
  });

  it('lease against the provider certificate', () => {
    const v = vectorBlock('lease');
    const st: AccountState = { ...dev(6), frontier: v.previous, balances: { XUSD: v.balance + v.amount } };
    const order = {
      provider: v.destination,
      vcpus: v.vcpus,
      memory_mb: v.memory_mb,
      disk_gb: v.disk_gb,
      duration: v.duration,
      accessPubKey: v.access_pub_key,
      certificateHash: v.certificate_hash,
      cost: v.amount,
    };
    const b = finish(buildLease(st, order, v.timestamp), devSeed(6));
    expect(b.hash).toBe(v.hash);
    expect(b.signature).toBe(v.signature);
  });

  it('refuses to overspend or to send from an unopened account', () => {
    const st: AccountState = { ...dev(6), frontier: null, balances: {} };
    expect(() => buildSend(st, { to: dev(7).address, amount: 1n, asset: 'XE' }, 1n)).toThrow(/not open yet/);
    const open: AccountState = { ...st, frontier: 'ab'.repeat(32), balances: { XE: 5n } };
    expect(() => buildSend(open, { to: dev(7).address, amount: 6n, asset: 'XE' }, 1n)).toThrow(/insufficient XE: have 5, sending 6/);
  });
});
