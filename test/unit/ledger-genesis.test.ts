// Ledger genesis (ledger.md §19) and the effective lease timing (leases.md §4).
import { describe, expect, it } from 'vitest';
import { blockToJson } from '../../ledger/codec/block.js';
import { stringifyJson } from '../../ledger/codec/json.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS } from '../../ledger/genesis/devnet.js';
import {
  DEFAULT_LEASE_TIMING,
  GENESIS_SUPPLY,
  checkLeaseTiming,
  effectiveLeaseTiming,
  parseLedgerGenesis,
  validateLedgerGenesis,
} from '../../ledger/genesis/genesis.js';
import type { Block } from '../../ledger/types.js';
import { build, dev, expectReject, openTestLedger } from './ledger-helpers.js';

const D1 = dev(1);

function genesis(f: Partial<Block> = {}): Block {
  return build(
    'genesis',
    { account: D1.address, previous: '0', balance: GENESIS_SUPPLY, timestamp: 0n, asset: 'XE', representative: D1.address, ...f },
    1,
    { networkId: '', difficulty: 0n },
  );
}

describe('ledger genesis validation', () => {
  it('accepts the devnet genesis and pins its timing', () => {
    const g = parseLedgerGenesis(DEVNET_LEDGER_GENESIS);
    expect(validateLedgerGenesis(g)).toEqual({
      lease_min_duration_secs: 5n,
      lease_settle_grace_ns: 30_000_000_000n,
      lease_force_settle_gap_ns: 25_000_000_000n,
      lease_escrow_expiry_ns: 3_600_000_000_000n,
      lease_archive_gap_ns: 3_600_000_000_000n,
      max_attestation_skew_ns: 10_000_000_000n,
    });
  });

  it('fills zero timing fields with the defaults', () => {
    const g = genesis();
    expect(validateLedgerGenesis(g)).toEqual(DEFAULT_LEASE_TIMING);
    expect(effectiveLeaseTiming({ ...g, lease_min_duration_secs: 7n }).lease_min_duration_secs).toBe(7n);
  });

  it('rejects each broken rule', () => {
    expectReject(() => validateLedgerGenesis(genesis({ timestamp: 1n })), 'genesis: timestamp must be 0');
    expectReject(() => validateLedgerGenesis(genesis({ asset: 'XUSD' })), 'genesis: asset must be XE');
    expectReject(() => validateLedgerGenesis(genesis({ balance: 1n })), `genesis: balance must be ${GENESIS_SUPPLY}`);
    expectReject(
      () => validateLedgerGenesis(genesis({ representative: '0'.repeat(64) })),
      'genesis: representative must be 64 lowercase hex characters, not all zeros',
    );
    expectReject(
      () => validateLedgerGenesis(genesis({ representative: '' })),
      'genesis: representative must be 64 lowercase hex characters, not all zeros',
    );
    expectReject(
      () => validateLedgerGenesis(genesis({ representative: D1.pub })),
      'genesis: representative must be an address, not the public key',
    );
    const g = genesis();
    expectReject(() => validateLedgerGenesis({ ...g, signature: genesis({ representative: dev(2).address }).signature }), 'verify: signature verification failed');
    // Hashed with a network id instead of the empty one.
    const wrong = build('genesis', { ...g, hash: '', signature: '' }, 1, { networkId: 'devnet', difficulty: 0n });
    expect(() => validateLedgerGenesis(wrong)).toThrow(/^verify: hash mismatch/);
  });

  it('enforces the §4.2 timing constraints', () => {
    const t = { ...DEFAULT_LEASE_TIMING };
    expectReject(
      () => checkLeaseTiming({ ...t, lease_force_settle_gap_ns: 2n * t.max_attestation_skew_ns }),
      'genesis: invalid lease timing: lease_force_settle_gap_ns must be > 2 * max_attestation_skew_ns',
    );
    expectReject(
      () => checkLeaseTiming({ ...t, lease_escrow_expiry_ns: t.lease_settle_grace_ns + t.lease_force_settle_gap_ns }),
      'genesis: invalid lease timing: lease_escrow_expiry_ns must be > lease_settle_grace_ns + lease_force_settle_gap_ns',
    );
    expectReject(
      () => validateLedgerGenesis(genesis({ lease_force_settle_gap_ns: 1n })),
      'genesis: invalid lease timing: lease_force_settle_gap_ns must be > 2 * max_attestation_skew_ns',
    );
  });
});

describe('ledger genesis application', () => {
  it('commits the genesis final, with the whole supply delegated', () => {
    const t = openTestLedger();
    const chain = t.ledger.accountChain(D1.address);
    expect(chain.total).toBe(1);
    expect(chain.blocks[0]!.finalized).toBe(true);
    expect(t.ledger.genesisHash).toBe('9408143ef98180bc05e03d483ebb4876c55022a3e8fb171197070fa45ca2ab6c');
    expect(t.ledger.delegation().weights).toEqual({ [D1.address]: GENESIS_SUPPLY });
    expect(t.ledger.balances(D1.address)).toEqual({
      address: D1.address,
      balances: { XE: GENESIS_SUPPLY },
      spendable: { XE: GENESIS_SUPPLY },
      final_height: 1,
    });
    expect(t.ledger.leaseTiming.lease_min_duration_secs).toBe(5n);
    t.close();
  });

  it('refuses a data dir built under another ledger genesis', () => {
    const t = openTestLedger();
    const path = t.path;
    t.close();
    const other = stringifyJson(blockToJson(genesis()));
    expect(() => openTestLedger({ genesis: { ledger: other, statechain: DEVNET_STATECHAIN_GENESIS } }, path)).toThrow(
      'genesis mismatch: this data dir belongs to a different network',
    );
    // A fresh data dir takes it (default timing).
    const t2 = openTestLedger({ genesis: { ledger: other, statechain: DEVNET_STATECHAIN_GENESIS } });
    expect(t2.ledger.leaseTiming).toEqual(DEFAULT_LEASE_TIMING);
    t2.close();
  });
});
