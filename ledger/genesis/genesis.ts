// Ledger genesis (ledger.md §19) and the effective lease timing it pins (leases.md §4).
import { invalid } from '../errors.js';
import { isLowerHex, ZERO_HASH } from '../codec/hex.js';
import { parseJson } from '../codec/json.js';
import { intakeBlock, parseBlockJson, verifyBlockIntrinsics } from '../codec/block.js';
import type { Block, LeaseTiming } from '../types.js';

export const GENESIS_SUPPLY = 42_000_000_000_000n;

/** Defaults for a genesis field that is 0 or absent (leases.md §4.1). */
export const DEFAULT_LEASE_TIMING: Readonly<LeaseTiming> = Object.freeze({
  lease_min_duration_secs: 60n,
  lease_settle_grace_ns: 3_600_000_000_000n,
  lease_force_settle_gap_ns: 1_500_000_000_000n,
  lease_escrow_expiry_ns: 31_536_000_000_000_000n,
  lease_archive_gap_ns: 3_600_000_000_000n,
  max_attestation_skew_ns: 600_000_000_000n,
});

export function effectiveLeaseTiming(genesis: Block): LeaseTiming {
  const pick = (k: keyof LeaseTiming) => (genesis[k] !== 0n ? genesis[k] : DEFAULT_LEASE_TIMING[k]);
  return {
    lease_min_duration_secs: pick('lease_min_duration_secs'),
    lease_settle_grace_ns: pick('lease_settle_grace_ns'),
    lease_force_settle_gap_ns: pick('lease_force_settle_gap_ns'),
    lease_escrow_expiry_ns: pick('lease_escrow_expiry_ns'),
    lease_archive_gap_ns: pick('lease_archive_gap_ns'),
    max_attestation_skew_ns: pick('max_attestation_skew_ns'),
  };
}

/** leases.md §4.2; throws `genesis: invalid lease timing: <rule>`. */
export function checkLeaseTiming(t: LeaseTiming): void {
  const rules: [boolean, string][] = [
    [t.lease_min_duration_secs >= 1n, 'lease_min_duration_secs must be >= 1'],
    [t.lease_settle_grace_ns > 0n, 'lease_settle_grace_ns must be > 0'],
    [t.max_attestation_skew_ns > 0n, 'max_attestation_skew_ns must be > 0'],
    [
      t.lease_force_settle_gap_ns > 2n * t.max_attestation_skew_ns,
      'lease_force_settle_gap_ns must be > 2 * max_attestation_skew_ns',
    ],
    [
      t.lease_escrow_expiry_ns > t.lease_settle_grace_ns + t.lease_force_settle_gap_ns,
      'lease_escrow_expiry_ns must be > lease_settle_grace_ns + lease_force_settle_gap_ns',
    ],
    [t.lease_archive_gap_ns > 0n, 'lease_archive_gap_ns must be > 0'],
  ];
  for (const [ok, rule] of rules) if (!ok) throw invalid(`genesis: invalid lease timing: ${rule}`);
}

export function parseLedgerGenesis(text: string): Block {
  return intakeBlock(parseBlockJson(parseJson(text)));
}

/** ledger.md §19 validation; returns the effective lease timing. */
export function validateLedgerGenesis(g: Block): LeaseTiming {
  if (g.type !== 'genesis') throw invalid('genesis: type must be "genesis"');
  if (g.previous !== '0') throw invalid('genesis: previous must be "0"');
  if (g.timestamp !== 0n) throw invalid('genesis: timestamp must be 0');
  if (g.asset !== 'XE') throw invalid('genesis: asset must be XE');
  if (g.balance !== GENESIS_SUPPLY) throw invalid(`genesis: balance must be ${GENESIS_SUPPLY}`);
  if (g.account === '') throw invalid('genesis: account must be set');
  if (!isLowerHex(g.representative, 64) || g.representative === ZERO_HASH) {
    throw invalid('genesis: representative must be 64 lowercase hex characters, not all zeros');
  }
  if (g.representative === g.pub_key) throw invalid('genesis: representative must be an address, not the public key');
  const timing = effectiveLeaseTiming(g);
  checkLeaseTiming(timing);
  verifyBlockIntrinsics(g, '');
  return timing;
}
