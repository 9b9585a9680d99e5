// Multisig accounts (ledger.md §9, §12.11, §12.12): open, update, full-threshold signatures.
import { beforeEach, describe, expect, it } from 'vitest';
import { short } from '../../ledger/codec/hex.js';
import type { Block } from '../../ledger/types.js';
import { Chains, build, dev, expectReject, keysetOf, multisigOf, openTestLedger, type TestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D6 = dev(6);
const KS = keysetOf([3, 4, 5], 2);
const MS = multisigOf([3, 4, 5], 2);

let t: TestLedger;
let c: Chains;
beforeEach(() => {
  t = openTestLedger();
  c = new Chains(t);
});

function open(f: Partial<Block> = {}, signers = [3, 4]): Block {
  return build('multisig_open', { account: MS, previous: '0', timestamp: t.clock.ns, asset: 'XE', keyset: KS, ...f }, signers);
}

function onMs(type: Block['type'], f: Partial<Block>, signers: number[]): Block {
  return build(type, { account: MS, previous: c.frontier(MS), timestamp: t.clock.ns, asset: 'XE', ...f }, signers);
}

describe('multisig_open', () => {
  it('registers the keyset at the derived address (the DAO vector address)', () => {
    expect(MS).toBe('33c2007eb82f535639766c0a8ac5240e42b90546ae66d05d59130b88d478253d');
    expect(c.submit(open()).status).toBe('applied');
    expect(t.ledger.keyset(MS)).toEqual(KS);
    expect(t.ledger.publicKeyOf(MS)).toBeNull();
  });

  it('rejects each rule with its exact message', () => {
    expectReject(() => c.submit(open({ keyset: null }, [3, 4])), 'multisig_open requires a keyset');
    expectReject(() => c.submit(open({ keyset: { keys: [], threshold: 1 } })), 'keyset: no keys');
    expectReject(() => c.submit(open({ keyset: { keys: KS.keys, threshold: 4 } })), 'keyset: threshold 4 out of range 1..3');
    const many = { keys: Array.from({ length: 257 }, (_, i) => i.toString(16).padStart(64, '0')), threshold: 1 };
    expectReject(() => c.submit(open({ keyset: many }, [3])), 'keyset: too many keys: 257 (max 256)');
    const dup = { keys: [KS.keys[0]!, KS.keys[0]!], threshold: 1 };
    expectReject(() => c.submit(open({ keyset: dup }, [3])), `keyset: duplicate key ${KS.keys[0]!.slice(0, 12)}`);
    expectReject(
      () => c.submit(open({ account: D6.address })),
      `multisig_open account mismatch: got ${short(D6.address)}, want ${short(MS)}`,
    );
    expectReject(() => c.submit(open({ balance: 5n })), 'multisig_open balance must be 0, got 5');
    expectReject(() => c.submit(open({ previous: D1.address })), 'multisig_open previous must be 0');
    c.submit(open());
    // A second open on the same account is a sibling of the first; staged validation refuses it.
    expectReject(() => c.submit(open({ timestamp: t.clock.ns + 1n })), 'multisig_open: account already exists');
  });

  it('needs the full threshold of its own keyset, in the documented check order', () => {
    expectReject(() => c.submit({ ...open(), signatures: [] }), 'multisig: no signatures');
    const full = open({}, [3, 4, 5]);
    expectReject(
      () => c.submit({ ...full, signatures: [...full.signatures!, full.signatures![0]!] }),
      'multisig: too many signatures: got 4, keyset has 3',
    );
    const two = open({}, [3, 4]);
    expectReject(
      () => c.submit({ ...two, signatures: [two.signatures![0]!, two.signatures![0]!] }),
      `multisig: duplicate signer: ${dev(3).pub.slice(0, 12)}`,
    );
    expectReject(() => c.submit(open({}, [3, 6])), `multisig: signer ${dev(6).pub.slice(0, 12)} not in keyset`);
    expectReject(
      () => c.submit({ ...two, signatures: [two.signatures![0]!, { ...two.signatures![1]!, signature: two.signatures![0]!.signature }] }),
      `multisig: sig from ${dev(4).pub.slice(0, 12)}: signature verification failed`,
    );
    expectReject(() => c.submit(open({}, [3])), 'multisig: insufficient signatures: got 1, need 2');
  });
});

describe('multisig accounts after opening', () => {
  beforeEach(() => {
    c.submit(open());
  });

  it('update: replaced with the old keyset threshold met; not met is rejected', () => {
    const next = keysetOf([3, 4, 5, 6], 3);
    expectReject(() => c.submit(onMs('multisig_update', { keyset: next }, [5])), 'multisig: insufficient signatures: got 1, need 2');
    // Signed by members of the NEW keyset only (dev6 is not in the current one).
    expectReject(() => c.submit(onMs('multisig_update', { keyset: next }, [5, 6])), `multisig: signer ${dev(6).pub.slice(0, 12)} not in keyset`);
    c.submit(onMs('multisig_update', { keyset: next }, [3, 5]));
    expect(t.ledger.keyset(MS)).toEqual(next);
    // From now on the new threshold (3) applies to every block of the account.
    expectReject(() => c.submit(onMs('multisig_update', { keyset: KS }, [3, 5])), 'multisig: insufficient signatures: got 2, need 3');
    c.submit(onMs('multisig_update', { keyset: KS }, [3, 5, 6]));
    expect(t.ledger.keyset(MS)).toEqual(KS);
  });

  it('update: every rule in order', () => {
    expectReject(() => c.submit(onMs('multisig_update', { keyset: null }, [3, 4])), 'multisig_update requires a keyset');
    expectReject(() => c.submit(onMs('multisig_update', { keyset: { keys: KS.keys, threshold: 0 } }, [3, 4])), 'keyset: threshold 0 out of range 1..3');
    expectReject(
      () => c.submit(onMs('multisig_update', { keyset: KS, previous: D1.address }, [3, 4])),
      `previous mismatch: got ${short(D1.address)}, want ${short(c.frontier(MS))}`,
      true,
    );
    expectReject(() => c.submit(onMs('multisig_update', { keyset: KS, balance: 1n }, [3, 4])), 'multisig_update balance mismatch: expected 0, got 1');
    // A single-key account cannot be updated (it has no keyset); with signatures it is refused earlier.
    c.fund(D6, 100n, 0n);
    const single = build('multisig_update', { account: D6.address, previous: c.frontier(D6), timestamp: t.clock.ns, asset: 'XE', keyset: KS }, 6);
    expectReject(() => c.submit(single), 'multisig_update: account is not multisig');
  });

  it('receives and sends with the full threshold; single signatures are refused', () => {
    const s = c.send(D1, MS, 1000n);
    c.submit(onMs('receive', { source: s.hash, balance: 1000n }, [4, 5]));
    expect(c.balance(MS, 'XE')).toBe(1000n);
    const unsigned = build('send', { account: MS, previous: c.frontier(MS), timestamp: t.clock.ns, asset: 'XE', destination: D1.address, amount: 1n, balance: 999n }, 3);
    expectReject(() => c.submit(unsigned), 'multisig account requires signatures');
    c.submit(onMs('send', { destination: D1.address, amount: 1n, balance: 999n }, [3, 5]));
    expect(c.balance(MS, 'XE')).toBe(999n);
  });

  it('a lease access key may not be a keyset member', () => {
    // fund the multisig account with XUSD first
    c.mint(10_000n);
    const s = c.send(dev(2), MS, 10_000n, 'XUSD');
    c.submit(onMs('receive', { asset: 'XUSD', source: s.hash, balance: 10_000n }, [3, 4]));
    const lease = onMs('lease', { asset: 'XUSD', destination: D1.address, vcpus: 1n, duration: 60n, amount: 1n, access_pub_key: dev(5).pub, certificate_hash: D1.address }, [3, 4]);
    expectReject(() => c.submit(lease), 'lease access_pub_key must not be a signing key of the consumer account');
  });
});
