// What a block validator sees (the state view, governance as of the block, the path) and what it
// returns (effects, committed by ledger/state/apply.ts). Validators never write.
import type { Block, Certificate, IntakePath, Keyset, LeaseTiming, PendingEntry, StoredLeaseState } from '../types.js';
import type { GovernanceView } from '../statechain/governance.js';
import type { AccountState, StoredLease } from '../state/records.js';

export type { GovernanceView };

export interface LedgerView {
  account(address: string): AccountState | undefined;
  pending(hash: string): PendingEntry | undefined;
  lease(hash: string): StoredLease | undefined;
  /** Whether a block with this hash is on a chain. */
  hasBlock(hash: string): boolean;
  certificate(hash: string): Certificate | null;
  /** A retained certificate of the same provider covering `at` that is newer than `cert`. */
  supersededBy(cert: Certificate, at: bigint): Certificate | null;
  /** The position of the send `sendHash` (on `account`) has an unresolved conflict. */
  isSendContested(sendHash: string, account: string): boolean;
}

export interface ValidationContext {
  view: LedgerView;
  path: IntakePath;
  now: bigint;
  /** Governance as of the block's timestamp (statechain.md §11). */
  gov: GovernanceView;
  timing: LeaseTiming;
  /**
   * Staged validation of a conflict sibling (ledger.md §14): the running balances just before the
   * sibling; the previous = frontier and timestamp rules are skipped.
   */
  staged: { balances: Map<string, bigint> } | null;
}

export interface LeaseChange {
  record: StoredLease;
  /** State the lease must still be in at commit (null: must not exist yet), ledger.md §12.14. */
  expect: StoredLeaseState | null;
}

export interface Effects {
  pendingAdd?: PendingEntry;
  pendingRemove?: string;
  pendingGrow?: { hash: string; amount: bigint };
  lease?: LeaseChange;
  /** XUSD credited back to the block's account outside any block balance (settle, §17.1). */
  stakeReturn?: bigint;
  keyset?: Keyset;
  minted?: bigint;
  burned?: bigint;
  /** Certificate to pin for ever (referenced by a lease or lease_renew). */
  pinCertificate?: string;
}

export type Validator = (ctx: ValidationContext, block: Block) => Effects;
