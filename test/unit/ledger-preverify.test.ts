// Ledger.preverify and precomputePow: signatures checked and PoW values computed elsewhere (the
// intake's worker threads) replace the inline work only for the exact items they were computed
// for, once.
import { beforeEach, describe, expect, it } from 'vitest';
import { build, Chains, dev, openTestLedger, type TestLedger } from './ledger-helpers.js';

const D1 = dev(1);
const D7 = dev(7);

let t: TestLedger;
let c: Chains;
beforeEach(() => {
  t = openTestLedger({ identitySeed: D1.seed, stabilityWindowNs: 0n });
  c = new Chains(t);
});

/** A send from dev1 whose signature is replaced by `signature` (the hash does not cover it). */
function sendSignedWith(signature: string) {
  const b = c.next('send', D1, { asset: 'XE', destination: D7.address, amount: 5n, balance: c.balance(D1, 'XE') - 5n });
  return { ...b, signature };
}

const BOGUS = 'ab'.repeat(64);

describe('preverify', () => {
  it('an entry for the exact key, hash and signature skips the check, once', () => {
    const forged = sendSignedWith(BOGUS);
    t.ledger.preverify([{ publicKey: D1.pub, hash: forged.hash, signature: BOGUS }]);
    expect(t.ledger.submit(forged).status).toBe('applied');

    // Used up: the same forged signature on the next block is checked, and fails.
    const next = sendSignedWith(BOGUS);
    t.ledger.preverify([{ publicKey: D1.pub, hash: 'cd'.repeat(32), signature: BOGUS }]);
    expect(() => t.ledger.submit(next)).toThrow('signature verification failed');
  });

  it('an entry with another key or signature for the same hash does not', () => {
    const forged = sendSignedWith(BOGUS);
    t.ledger.preverify([
      { publicKey: D7.pub, hash: forged.hash, signature: BOGUS },
      { publicKey: D1.pub, hash: forged.hash, signature: 'ef'.repeat(64) },
    ]);
    expect(() => t.ledger.submit(forged)).toThrow('signature verification failed');
    const honest = build('send', { ...forged, signature: '' }, 1);
    expect(t.ledger.submit(honest).status).toBe('applied');
  });
});

describe('precomputePow', () => {
  it('the value given for the block’s hash and nonce is the one compared with the difficulty, once', () => {
    const send = c.next('send', D1, { asset: 'XE', destination: D7.address, amount: 5n, balance: c.balance(D1, 'XE') - 5n });
    t.ledger.precomputePow([{ hash: send.hash, nonce: send.pow_nonce, value: 0n }]);
    expect(() => t.ledger.submit(send)).toThrow('invalid proof of work');
    // Used up: the block's own (valid) proof of work is computed now.
    expect(t.ledger.submit(send).status).toBe('applied');
  });

  it('a value given for another nonce is ignored', () => {
    const send = c.next('send', D1, { asset: 'XE', destination: D7.address, amount: 5n, balance: c.balance(D1, 'XE') - 5n });
    t.ledger.precomputePow([{ hash: send.hash, nonce: send.pow_nonce + 1n, value: 0n }]);
    expect(t.ledger.submit(send).status).toBe('applied');
  });
});
