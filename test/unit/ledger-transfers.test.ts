// send, receive, burn, mint (ledger.md §12.1–§12.4): accepted blocks and every documented rejection.
import { beforeEach, describe, expect, it } from 'vitest';
import { short } from '../../ledger/codec/hex.js';
import { Chains, dev, expectReject, openTestLedger, statechainGenesisVariant, type TestLedger } from './ledger-helpers.js';
import { DEVNET_LEDGER_GENESIS } from '../../ledger/genesis/devnet.js';
import type { Block } from '../../ledger/types.js';
import { U64_MAX } from '../../ledger/codec/bytes.js';

const D1 = dev(1);
const D2 = dev(2);
const D6 = dev(6);
const D7 = dev(7);

let t: TestLedger;
let c: Chains;
beforeEach(() => {
  t = openTestLedger();
  c = new Chains(t);
  c.fund(D6, 1_000_000n, 500_000n);
});

describe('send', () => {
  it('applies, debits the sender and creates a pending entry', () => {
    const s = c.send(D6, D7, 1000n);
    expect(c.balance(D6, 'XE')).toBe(999_000n);
    expect(t.ledger.pendingFor(D7.address)).toEqual([
      { send_hash: s.hash, source: D6.address, destination: D7.address, amount: 1000n, asset: 'XE', timestamp: s.timestamp },
    ]);
  });

  it('rejects each rule with its exact message, in order', () => {
    const base = { asset: 'XE', destination: D7.address, amount: 10n, balance: 999_990n };
    expectReject(() => c.submit(c.next('send', D6, { ...base, previous: D1.address })), `previous mismatch: got ${short(D1.address)}, want ${short(c.frontier(D6))}`, true);
    expectReject(() => c.submit(c.next('send', D6, { ...base, timestamp: t.clock.ns - 1n })), `block timestamp ${t.clock.ns - 1n} is before previous block timestamp ${t.clock.ns}`);
    expectReject(() => c.submit(c.next('send', D6, { ...base, amount: 0n, balance: 1_000_000n })), 'send amount must be > 0');
    expectReject(() => c.submit(c.next('send', D6, { ...base, amount: 2_000_000n, balance: 0n })), 'insufficient balance: have 1000000, sending 2000000');
    expectReject(() => c.submit(c.next('send', D6, { ...base, balance: 5n })), 'balance mismatch: expected 999990, got 5');
    expectReject(() => c.submit(c.next('send', D6, { ...base, destination: '' })), 'send must have a destination');
    expectReject(() => c.submit(c.next('send', D6, { ...base, destination: D6.address })), 'cannot send to self');
    // A bad memo cannot even be encoded: the verify step rejects it before the send rules.
    expectReject(() => c.submit({ ...c.next('send', D6, base), memo: 'x'.repeat(65) }), 'verify: encode: memo too long: 65 bytes (max 64)');
  });

  it('rejects a send from an unopened account (no declared key) as retryable', () => {
    const b = c.next('send', D7, { asset: 'XE', destination: D6.address, amount: 1n, previous: D1.address });
    expectReject(() => c.submit(b), `signature: unopened account ${short(D7.address)} has no declared public key`, true);
  });

  it('rejects a send that opens a chain: send from unopened account', () => {
    const b = c.next('send', D7, { asset: 'XE', destination: D6.address, amount: 1n, previous: '0' });
    expectReject(() => c.submit(b), `send from unopened account: ${short(D7.address)}`, true);
  });
});

describe('receive', () => {
  let send: Block;
  beforeEach(() => {
    send = c.send(D6, D7, 1000n);
  });

  it('opens a chain, declares the key and credits the pending amount', () => {
    c.receive(D7, send, D1.address);
    expect(c.balance(D7, 'XE')).toBe(1000n);
    expect(t.ledger.publicKeyOf(D7.address)).toBe(D7.pub);
    expect(t.ledger.pendingFor(D7.address)).toEqual([]);
  });

  it('rejects each rule with its exact message', () => {
    const open = (f: Partial<Block>) => c.next('receive', D7, { asset: 'XE', source: send.hash, balance: 1000n, ...f });
    expectReject(() => c.submit(open({ source: '' })), 'receive must reference a source send');
    expectReject(() => c.submit(open({ source: D1.address })), `source send not pending: ${short(D1.address)}`, true);
    const other = c.send(D6, D2, 5n);
    expectReject(() => c.submit(open({ source: other.hash })), 'send not addressed to this account');
    expectReject(() => c.submit(open({ asset: 'XUSD' })), 'receive asset "XUSD" does not match pending send asset "XE"');
    expectReject(() => c.submit(open({ balance: 999n })), 'open-receive balance mismatch: expected 1000, got 999');
    c.submit(open({}));
    const send2 = c.send(D6, D7, 50n);
    const next = (f: Partial<Block>) => c.next('receive', D7, { asset: 'XE', source: send2.hash, balance: 1050n, ...f });
    expectReject(() => c.submit(next({ timestamp: t.clock.ns - 1n })), `block timestamp ${t.clock.ns - 1n} is before previous block timestamp ${t.clock.ns}`);
    expectReject(() => c.submit(next({ balance: 1049n })), 'receive balance mismatch: expected 1050, got 1049');
  });

  it('guards the u64 balance against overflow', () => {
    c.mint(U64_MAX - c.balance(D2, 'XUSD'));
    const big = c.send(D2, D7, U64_MAX - 5n, 'XUSD');
    const rest = c.send(D2, D7, 5n, 'XUSD');
    c.receive(D7, big);
    c.receive(D7, rest);
    expect(c.balance(D7, 'XUSD')).toBe(U64_MAX);
    c.mint(1n);
    const one = c.send(D2, D7, 1n, 'XUSD');
    const b = c.next('receive', D7, { asset: 'XUSD', source: one.hash, balance: 0n });
    expectReject(() => c.submit(b), 'receive would overflow uint64 balance');
  });
});

describe('burn', () => {
  it('destroys XE and counts it as burned', () => {
    c.submit(c.next('burn', D6, { asset: 'XE', amount: 100n, balance: 999_900n, memo: 'bye' }));
    expect(c.balance(D6, 'XE')).toBe(999_900n);
    expect(t.ledger.supply().assets.XE!.burned).toBe(100n);
    expect(t.ledger.supply().conserved).toBe(true);
  });

  it('rejects each rule with its exact message', () => {
    const burn = (f: Partial<Block>) => c.next('burn', D6, { asset: 'XE', amount: 100n, balance: 999_900n, ...f });
    expectReject(() => c.submit(burn({ asset: 'XUSD', balance: 499_900n })), 'burn: restricted to XE');
    expectReject(() => c.submit(burn({ destination: D7.address })), 'burn: must not have source or destination');
    expectReject(() => c.submit(burn({ source: D7.address })), 'burn: must not have source or destination');
    expectReject(() => c.submit(burn({ amount: 0n, balance: 1_000_000n })), 'burn: amount must be > 0');
    expectReject(() => c.submit(c.next('burn', D7, { asset: 'XE', amount: 1n, previous: '0' })), `burn from unopened account: ${short(D7.address)}`, true);
    expectReject(() => c.submit(burn({ amount: 2_000_000n, balance: 0n })), 'insufficient balance: have 1000000 XE, burning 2000000');
    expectReject(() => c.submit(burn({ balance: 1n })), 'burn: balance mismatch: expected 999900, got 1');
    expectReject(() => c.submit({ ...burn({}), memo: 'a\u0001b' }), 'verify: encode: memo contains disallowed control byte 0x01 at offset 1');
  });
});

describe('mint', () => {
  it('lets only sys.minter mint XUSD, opening its chain', () => {
    const minted = t.ledger.supply().assets.XUSD!.minted;
    c.mint(7n);
    expect(t.ledger.supply().assets.XUSD!.minted).toBe(minted + 7n);
  });

  it('rejects each rule with its exact message', () => {
    const mint = (f: Partial<Block>) =>
      c.next('mint', D2, { asset: 'XUSD', amount: 10n, balance: c.balance(D2, 'XUSD') + 10n, ...f });
    expectReject(() => c.submit(mint({ asset: 'XE' })), 'mint: restricted to XUSD');
    expectReject(
      () => c.submit(c.next('mint', D6, { asset: 'XUSD', amount: 10n, balance: c.balance(D6, 'XUSD') + 10n })),
      `mint: account ${short(D6.address)} is not an authorized minter`,
    );
    expectReject(() => c.submit(mint({ destination: D6.address })), 'mint: must not have source or destination');
    // Intake names the field (§4 rule 1) before the encoder could refuse it.
    expectReject(() => c.submit({ ...mint({}), memo: 'hi' }), 'mint: memo not allowed');
    expectReject(() => c.submit(mint({ amount: 0n, balance: c.balance(D2, 'XUSD') })), 'mint: amount must be > 0');
    expectReject(() => c.submit(mint({ balance: 1n })), `mint: balance mismatch: expected ${c.balance(D2, 'XUSD') + 10n}, got 1`);
    c.mint(10n);
    expectReject(
      () => c.submit(mint({ amount: U64_MAX, balance: U64_MAX })),
      'mint: balance would overflow uint64',
    );
  });

  it('reads sys.minter as of the block: retryable on an unsettled sync, nobody without it', () => {
    const b = c.next('mint', D6, { asset: 'XUSD', amount: 10n, balance: c.balance(D6, 'XUSD') + 10n });
    expectReject(
      () => t.ledger.submit(b, 'sync'),
      `mint: account ${short(D6.address)} is not an authorized minter: retry after statechain syncs`,
      true,
      'sync',
    );
    const t2 = openTestLedger({ genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: statechainGenesisVariant({ 'sys.minter': null }) } });
    const c2 = new Chains(t2);
    expectReject(() => c2.submit(c2.next('mint', D2, { asset: 'XUSD', amount: 10n, balance: 10n })), `mint: account ${short(D2.address)} is not an authorized minter`);
    t2.close();
  });

  it('checks the opening mint of a fresh minter chain', () => {
    const t2 = openTestLedger();
    const c2 = new Chains(t2);
    expectReject(() => c2.submit(c2.next('mint', D2, { asset: 'XUSD', amount: 10n, balance: 9n })), 'mint: balance mismatch: expected 10, got 9');
    // A non-opening mint on an unopened chain is caught by the credentials step first.
    expectReject(
      () => c2.submit(c2.next('mint', D2, { asset: 'XUSD', amount: 10n, balance: 10n, previous: D1.address })),
      `signature: unopened account ${short(D2.address)} has no declared public key`,
      true,
    );
    t2.close();
  });
});
