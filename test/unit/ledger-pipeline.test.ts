// The validation pipeline of ledger.md §11 (steps 1–11) and the credentials of §8 / §9.3.
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { short } from '../../ledger/codec/hex.js';
import { parseBlockJson } from '../../ledger/codec/block.js';
import { parseJson } from '../../ledger/codec/json.js';
import { powValid, solvePow } from '../../ledger/crypto/pow.js';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { hexToBytes } from '../../ledger/codec/hex.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS, devSeed } from '../../ledger/genesis/devnet.js';
import { parseLedgerGenesis } from '../../ledger/genesis/genesis.js';
import type { Block } from '../../ledger/types.js';
import {
  Chains,
  DEFAULT_POW,
  SECOND,
  attest,
  build,
  dev,
  expectReject,
  openTestLedger,
  statechainGenesisVariant,
  type TestLedger,
} from './ledger-helpers.js';

const D1 = dev(1);
const D6 = dev(6);
const D7 = dev(7);
const HOUR = 3600n * SECOND;

let t: TestLedger;
let c: Chains;
beforeEach(() => {
  t = openTestLedger();
  c = new Chains(t);
  c.fund(D6, 1_000_000n, 0n);
});

function sendFields(f: Partial<Block> = {}): Partial<Block> {
  return { asset: 'XE', destination: D7.address, amount: 10n, balance: c.balance(D6, 'XE') - 10n, ...f };
}

describe('steps 1–3: type, intake, attestations', () => {
  it('answers unknown and malformed types', () => {
    expectReject(() => parseBlockJson(parseJson('{"type":"teleport"}')), 'unknown block type: teleport', true);
    expectReject(() => parseBlockJson(parseJson('{"type":"Tele port"}')), 'invalid block type');
  });

  it('rejects bad hex shapes by field name, never normalizing', () => {
    const b = c.next('send', D6, sendFields());
    expectReject(() => c.submit({ ...b, destination: D7.address.toUpperCase() }), 'invalid destination: must be 64 lowercase hex characters');
    expectReject(() => c.submit({ ...b, account: 'abc' }), 'invalid account: must be 64 lowercase hex characters');
    expectReject(() => c.submit({ ...b, previous: '' }), 'invalid previous: must be 64 lowercase hex characters');
    expectReject(() => c.submit({ ...b, signature: 'ab' }), 'invalid signature: must be 128 lowercase hex characters');
  });

  it('drops fields that do not apply before hashing', () => {
    const b = c.next('send', D6, sendFields());
    // `source` does not apply to send: dropped at intake, so the hash still verifies.
    const res = c.submit({ ...b, source: D1.address });
    expect(res.status).toBe('applied');
    expect(res.block.source).toBe('');
  });

  it('limits attestations to 20 and rejects duplicate keys', () => {
    const b = c.next('lease_accept', D1, { asset: 'XUSD', source: D7.address });
    const many = Array.from({ length: 21 }, (_, i) => attest(D7.address, BigInt(i), 1));
    expectReject(() => c.submit({ ...b, attestations: many }), 'too many attestations: 21 exceeds max 20');
    const a = attest(D7.address, 1n);
    expectReject(() => c.submit({ ...b, attestations: [a, a] }), `duplicate attestation key ${a.public_key.slice(0, 12)}`);
  });

  it('refuses a genesis block once the ledger exists', () => {
    expectReject(() => c.submit(parseLedgerGenesis(DEVNET_LEDGER_GENESIS)), 'genesis block rejected: ledger is not empty');
  });
});

describe('step 4: verify', () => {
  it('rechecks the hash and the key declaration', () => {
    const b = c.next('send', D6, sendFields());
    const computed = b.hash;
    const other = c.next('send', D6, sendFields({ amount: 11n, balance: c.balance(D6, 'XE') - 11n }));
    expectReject(() => c.submit({ ...b, hash: other.hash }), `verify: hash mismatch: got ${other.hash}, want ${computed}`);
    const declared = build('send', { account: D6.address, previous: c.frontier(D6), timestamp: t.clock.ns, ...sendFields() }, 6, { declare: true });
    expectReject(() => c.submit(declared), 'verify: non-open block must not declare pub_key');
    const undeclared = build('receive', { account: D7.address, previous: '0', timestamp: t.clock.ns, asset: 'XE' }, 7, { declare: false });
    expectReject(() => c.submit(undeclared), 'verify: open block must declare pub_key');
    const wrongKey = build('receive', { account: D7.address, previous: '0', timestamp: t.clock.ns, asset: 'XE', pub_key: D6.pub }, 6, { declare: false });
    expectReject(() => c.submit(wrongKey), `verify: pub_key does not derive account address: derived ${D6.address}, account ${D7.address}`);
    const open = build('receive', { account: D7.address, previous: '0', timestamp: t.clock.ns, asset: 'XE' }, 7);
    const forged = { ...open, signature: signEd25519(devSeed(6), hexToBytes(open.hash)) };
    expectReject(() => c.submit(forged), 'verify: signature verification failed');
  });

  it('rejects blocks hashed for another network', () => {
    const b = build('send', { account: D6.address, previous: c.frontier(D6), timestamp: t.clock.ns, ...sendFields() }, 6, { networkId: 'othernet' });
    const want = build('send', { account: D6.address, previous: c.frontier(D6), timestamp: t.clock.ns, ...sendFields() }, 6).hash;
    expectReject(() => c.submit(b), `verify: hash mismatch: got ${b.hash}, want ${want}`);
  });
});

describe('step 5: proof of work', () => {
  it('checks the node difficulty: not retryable live, retryable on sync', () => {
    const t2 = openTestLedger({ powDifficulty: DEFAULT_POW });
    const c2 = new Chains(t2);
    let b = c2.next('send', D1, { asset: 'XE', destination: D7.address, amount: 1n, balance: c2.balance(D1, 'XE') - 1n });
    if (powValid(b.pow_nonce, b.hash, DEFAULT_POW)) b = { ...b, pow_nonce: b.pow_nonce + 1n };
    while (powValid(b.pow_nonce, b.hash, DEFAULT_POW)) b = { ...b, pow_nonce: b.pow_nonce + 1n };
    expectReject(() => t2.ledger.submit(b), 'invalid proof of work');
    expectReject(() => t2.ledger.submit(b, 'sync'), 'invalid proof of work', true, 'sync');
    expect(t2.ledger.submit({ ...b, pow_nonce: solvePow(b.hash, DEFAULT_POW) }).status).toBe('applied');
    t2.close();
  });

  it('applies the network minimum from sys.tokenomics as of the block', () => {
    const tok =
      '{"r_init":2000,"r_floor":100,"v_half":500000000,"price_tier_1":500,"price_tier_2":1010,"price_tier_3":10000,"r_price_floor_tier_1":2000,"r_price_floor_tier_2":1250,"r_collusion_factor_milli":950,"hermite_fdv_min_usd":5000000,"hermite_fdv_max_usd":1000000000,"hermite_ceiling_milli":1550,"hermite_floor_milli":1120,"stake_divisor":5,"min_pow_difficulty":18446735277616529408}';
    const t2 = openTestLedger({ powDifficulty: 0n, genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: statechainGenesisVariant({ 'sys.tokenomics': tok }) } });
    const c2 = new Chains(t2);
    let b = c2.next('send', D1, { asset: 'XE', destination: D7.address, amount: 1n, balance: c2.balance(D1, 'XE') - 1n });
    while (powValid(b.pow_nonce, b.hash, DEFAULT_POW)) b = { ...b, pow_nonce: b.pow_nonce + 1n };
    expectReject(() => t2.ledger.submit(b), 'invalid proof of work');
    t2.close();
  });
});

describe('step 6: timestamp window (live only)', () => {
  it('rejects negative and far-off timestamps on the live path', () => {
    const neg = c.next('send', D6, sendFields({ timestamp: -1n }));
    expectReject(() => c.submit(neg), 'block timestamp must not be negative');
    const late = c.next('send', D6, sendFields({ timestamp: t.clock.ns + HOUR + 1n }));
    expectReject(() => c.submit(late), 'block timestamp out of range: delta=1h0m0.000000001s');
    const early = c.next('send', D6, sendFields({ timestamp: t.clock.ns - 2n * HOUR - 30n * 60n * SECOND }));
    expectReject(() => c.submit(early), 'block timestamp out of range: delta=-2h30m0s');
    // Sync skips the window (the monotone rule still applies).
    expect(t.ledger.submit(late, 'sync').status).toBe('applied');
  });
});

describe('step 8: duplicates', () => {
  it('answers an already held block as a duplicate without change', () => {
    const b = c.next('send', D6, sendFields());
    expect(c.submit(b).status).toBe('applied');
    const before = t.ledger.stats().block_count;
    const again = c.submit(b);
    expect(again.status).toBe('duplicate');
    expect(again.block.hash).toBe(b.hash);
    expect(t.ledger.stats().block_count).toBe(before);
  });
});

describe('step 9: credentials', () => {
  it('verifies non-opening blocks against the stored key', () => {
    const b = c.next('send', D6, sendFields(), 7);
    expectReject(() => c.submit(b), 'signature: signature verification failed');
    expectReject(() => c.submit({ ...c.next('send', D6, sendFields()), signature: '' }), 'signature: signature verification failed');
  });

  it('separates single-key and multisig accounts', () => {
    const withSigs = c.next('send', D6, sendFields(), [6]);
    expectReject(() => c.submit(withSigs), 'block has signatures but account is not multisig');
    const unknown = build('send', { account: D7.address, previous: D1.address, timestamp: t.clock.ns, ...sendFields() }, [7]);
    expectReject(
      () => c.submit(unknown),
      `block has signatures but multisig keyset is not known: unopened account ${short(D7.address)} (multisig_open not yet synced)`,
      true,
    );
  });
});

describe('step 11: asset', () => {
  it('requires an allowed asset, quoting it only when it is well-formed', () => {
    expectReject(() => c.submit(c.next('send', D6, sendFields({ asset: '' }))), 'block must have an asset');
    expectReject(() => c.submit(c.next('send', D6, sendFields({ asset: 'GOLD' }))), 'unsupported asset: "GOLD"');
    expectReject(() => c.submit(c.next('send', D6, sendFields({ asset: 'gold' }))), 'unsupported asset');
  });
});

describe('events', () => {
  it('announces applied blocks to subscribers, not duplicates', () => {
    const seen: string[] = [];
    const off = t.ledger.subscribe((e) => seen.push(e.kind === 'block.applied' ? e.block.hash : e.kind));
    const b = c.send(D6, D7, 5n);
    c.submit(b);
    off();
    c.send(D6, D7, 5n);
    expect(seen).toEqual([b.hash]);
  });
});

describe('genesis guard', () => {
  it('keeps a statechain-genesis variant network apart', () => {
    const t2 = openTestLedger();
    const path = t2.path;
    t2.close();
    expect(() =>
      openTestLedger({ genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: statechainGenesisVariant({ 'sys.phase': '2' }) } }, path),
    ).toThrow('genesis mismatch: this data dir belongs to a different network');
    const t3 = openTestLedger({ genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS } }, path);
    t3.close();
  });
});

describe('storage failures', () => {
  it('answers a busy database as a retryable storage conflict and changes nothing', () => {
    const other = new Database(t.path);
    t.db.pragma('busy_timeout = 0');
    other.prepare('BEGIN IMMEDIATE').run();
    const b = c.next('send', D6, sendFields());
    expectReject(() => c.submit(b), 'storage conflict: SQLITE_BUSY', true);
    other.prepare('ROLLBACK').run();
    other.close();
    expect(t.ledger.frontier(D6.address)).toBe(b.previous);
    expect(c.submit(b).status).toBe('applied');
  });
});
