// The ledger's public face: what the daemon (HTTP API, provider loop, gateway) may ask of it.
// `ledger/ledger.ts` implements it over the SQLite store; nothing outside `ledger/` reaches
// past this interface into the store.

import type { RawJson } from './codec/json.js';
import type { Vote } from './crypto/vote.js';
import type { LedgerError } from './errors.js';
import type {
  Block,
  Certificate,
  IntakePath,
  Keyset,
  Lease,
  LeaseState,
  LeaseTiming,
  PendingEntry,
} from './types.js';

export interface SubmitResult {
  /** applied: on the chain now; duplicate: already held, nothing changed; staged: held as a conflict sibling. */
  status: 'applied' | 'duplicate' | 'staged';
  /** The block as stored (intake copy, ledger.md §4). */
  block: Block;
}

export interface ChainBlock {
  block: Block;
  finalized: boolean;
}

export interface AccountSummary {
  address: string;
  balances: Record<string, bigint>;
  block_count: number;
  frontier: string;
  last_block_timestamp: bigint;
}

export interface BalanceReport {
  address: string;
  balances: Record<string, bigint>;
  spendable: Record<string, bigint>;
  final_height: number;
}

export interface Reputation {
  version: number;
  leases_accepted_as_provider: bigint;
  leases_settled_as_provider: bigint;
  lease_seconds_settled_as_provider: bigint;
  leases_unfulfilled_as_provider: bigint;
  leases_accepted_as_consumer: bigint;
  leases_settled_as_consumer: bigint;
  leases_cancelled_as_consumer: bigint;
  lease_seconds_settled_as_consumer: bigint;
  leases_unfulfilled_as_consumer: bigint;
  first_activity_at: bigint;
  last_activity_at: bigint;
}

export interface ConflictRecord {
  account_address: string;
  previous_hash: string;
  block_hashes: string[];
  detected_at: bigint;
  weight_snapshot: Record<string, bigint>;
  total_weight: bigint;
}

export interface DelegationReport {
  weights: Record<string, bigint>;
  total_weight: bigint;
  ineligible_weights: Record<string, bigint>;
  ineligible_weight: bigint;
  eligibility_restricted: boolean;
  eligibility_failed_open: boolean;
}

export interface AssetSupply {
  genesis: bigint;
  minted: bigint;
  emitted: bigint;
  created: bigint;
  burned: bigint;
  escrow_burned: bigint;
  stake_forfeited: bigint;
  destroyed: bigint;
  locked_stake: bigint;
  balances: bigint;
  in_flight: bigint;
  observed: bigint;
  accounted: bigint;
  discrepancy: bigint;
  conserved: boolean;
}

export interface SupplyReport {
  genesis_supply: bigint;
  assets: Record<string, AssetSupply>;
  accounts: number;
  blocks: number;
  leases: number;
  pending: number;
  conserved: boolean;
  notes: string[];
}

export interface LedgerStats {
  accounts: number;
  block_count: number;
  delegation_underflows: bigint;
  total_delegated_weight: bigint;
  representatives: number;
  finality_advances: bigint;
  last_finality_ns: bigint;
  unfinalized_positions: number;
  conflicts_open: number;
}

/** A page of a key-sorted listing; `nextAfter` is set when more keys follow. */
export interface KeyPage<T> {
  entries: [string, T][];
  nextAfter?: string;
}

export interface StatechainBlock {
  index: bigint;
  prev_hash: string;
  ops: { action: 'set' | 'delete'; key: string; value?: RawJson }[];
  signatures: { public_key: string; signature: string }[];
  hash: string;
  timestamp: bigint;
}

export interface StatechainService {
  tip(): StatechainBlock;
  blockAt(index: bigint): StatechainBlock | null;
  blocks(start: bigint, limit: number): StatechainBlock[];
  count(): number;
  /** Raw stored value text of a key, or null. */
  get(key: string): string | null;
  kv(prefix: string, after: string | undefined, limit: number): KeyPage<RawJson>;
  daoKeyset(): Keyset | null;
  /** Throws LedgerError; `duplicate` = already held at that index (no-op success). */
  submit(block: StatechainBlock, path: IntakePath): { status: 'applied' | 'duplicate'; block: StatechainBlock };
}

export interface CertificateService {
  get(hash: string): Certificate | null;
  /** The provider's active certificate at time `at` (leases.md §9.6). */
  active(provider: string, at: bigint): Certificate | null;
  /** Content-check and retain (leases.md §9.6). Throws LedgerError on a bad certificate. */
  add(cert: Certificate, opts?: { admitUnopened?: boolean }): void;
}

export type LedgerEvent =
  | { kind: 'block.applied'; block: Block }
  | { kind: 'block.staged'; block: Block }
  | { kind: 'statechain.applied'; block: StatechainBlock }
  /** A vote this node signed as a representative (ledger.md §15), for gossip on `net/votes`. */
  | { kind: 'vote.cast'; vote: Vote };

export interface LedgerService {
  readonly networkId: string;
  readonly genesisHash: string;
  readonly statechainGenesisHash: string;
  /** Effective lease timing (leases.md §4: genesis values, defaults for zeros). */
  readonly leaseTiming: LeaseTiming;
  readonly statechain: StatechainService;
  readonly certificates: CertificateService;

  /** Run a block through the pipeline (ledger.md §11). Throws LedgerError on rejection. */
  submit(block: Block, path?: IntakePath): SubmitResult;
  /**
   * Many blocks through the pipeline in one group commit (one durable write for the batch): per
   * block its result or its LedgerError, in order. Throws LedgerError when the commit itself fails.
   */
  submitMany(blocks: Block[], path?: IntakePath): (SubmitResult | LedgerError)[];
  /**
   * Signatures already checked elsewhere (e.g. on worker threads): the pipeline skips the ed25519
   * check of exactly these (public key, hash, signature) triples, once each.
   */
  preverify(entries: { publicKey: string; hash: string; signature: string }[]): void;
  /**
   * Proof-of-work values (ledger.md §10) already computed elsewhere: the pipeline compares the value
   * of exactly this (hash, nonce) with the difficulty instead of hashing again, once each.
   */
  precomputePow(entries: { hash: string; nonce: bigint; value: bigint }[]): void;

  getBlock(hash: string): ChainBlock | null;
  /** `getBlock(hash)?.finalized` without reading the block itself: null when no such block is held. */
  blockFinalized(hash: string): boolean | null;
  /** Oldest first; `total` is the full chain length. */
  accountChain(address: string, offset?: number, limit?: number): { total: number; blocks: ChainBlock[] };
  balances(address: string): BalanceReport;
  /** Running balance (ledger.md §17.1) of one asset. */
  runningBalance(address: string, asset: string): bigint;
  frontier(address: string): string | null;
  accounts(offset?: number, limit?: number): AccountSummary[];
  frontiers(after: string | undefined, limit: number): KeyPage<string>;
  /** Every account's frontier and block count, in address order, without a page to build. */
  sortedFrontiers(): Iterable<[address: string, frontier: string, blockCount: number]>;
  pending(): PendingEntry[];
  pendingFor(address: string): PendingEntry[];
  keyset(address: string): Keyset | null;
  /** Public key declared by a single-key account's opening block. */
  publicKeyOf(address: string): string | null;
  reputation(address: string): Reputation | null;
  reputations(after: string | undefined, limit: number): KeyPage<Reputation>;
  conflicts(): ConflictRecord[];
  conflictsFor(account: string): ConflictRecord[];
  delegation(): DelegationReport;
  supply(): SupplyReport;
  /** Lease record with its state as reported at `now` (expired is derived). */
  lease(hash: string, now?: bigint): Lease | null;
  leases(filter: { state?: LeaseState; offset?: number; limit?: number; now?: bigint }): Lease[];
  /** Newest blocks across all accounts (timestamp descending, then hash ascending). */
  newestBlocks(limit: number): Block[];
  stats(): LedgerStats;

  /** An incoming representative vote (ledger.md §15.1); may answer with this node's final vote. Throws LedgerError. */
  submitVote(vote: Vote): Vote | null;
  /** Time-driven work (finality after the stability window); the daemon calls it every ~250 ms. */
  tick(): void;

  subscribe(listener: (event: LedgerEvent) => void): () => void;
  close(): void;
}
