// Supply identity (ledger.md §17.3), computed from current state and the two history counters.
import type { PendingEntry } from '../types.js';
import type { AssetSupply, SupplyReport } from '../service.js';
import { leaseEscrow, type AccountState, type StoredLease } from './records.js';

export interface SupplyInputs {
  genesisSupply: bigint;
  accounts: Iterable<AccountState>;
  pending: Iterable<PendingEntry>;
  leases: Iterable<StoredLease>;
  minted: bigint;
  burned: bigint;
  blocks: number;
}

const ASSETS = ['XE', 'XUSD'] as const;

export function computeSupply(i: SupplyInputs): SupplyReport {
  const zero = () => ({ XE: 0n, XUSD: 0n }) as Record<string, bigint>;
  const balances = zero();
  const inFlight = zero();
  let accounts = 0;
  for (const a of i.accounts) {
    accounts++;
    for (const [asset, v] of a.balances) balances[asset] = (balances[asset] ?? 0n) + v;
  }
  let pendingCount = 0;
  for (const p of i.pending) {
    pendingCount++;
    const asset = p.asset === '' ? 'XE' : p.asset;
    inFlight[asset] = (inFlight[asset] ?? 0n) + p.amount;
  }
  let emitted = 0n;
  let escrowBurned = 0n;
  let stakeForfeited = 0n;
  let lockedStake = 0n;
  let leaseCount = 0;
  for (const l of i.leases) {
    leaseCount++;
    if (l.state === 'settled') {
      emitted += l.emission;
      escrowBurned += leaseEscrow(l);
    } else if (l.state === 'unfulfilled') {
      stakeForfeited += l.stake;
    } else if (l.state === 'accepted') {
      lockedStake += l.stake;
    }
  }
  const terms: Record<string, Omit<AssetSupply, 'created' | 'destroyed' | 'observed' | 'accounted' | 'discrepancy' | 'conserved'>> = {
    XE: {
      genesis: i.genesisSupply,
      minted: 0n,
      emitted,
      burned: i.burned,
      escrow_burned: 0n,
      stake_forfeited: 0n,
      locked_stake: 0n,
      balances: balances.XE!,
      in_flight: inFlight.XE!,
    },
    XUSD: {
      genesis: 0n,
      minted: i.minted,
      emitted: 0n,
      burned: 0n,
      escrow_burned: escrowBurned,
      stake_forfeited: stakeForfeited,
      locked_stake: lockedStake,
      balances: balances.XUSD!,
      in_flight: inFlight.XUSD!,
    },
  };
  const assets: Record<string, AssetSupply> = {};
  let conserved = true;
  for (const asset of ASSETS) {
    const t = terms[asset]!;
    const created = t.genesis + t.minted + t.emitted;
    const destroyed = t.burned + t.escrow_burned + t.stake_forfeited;
    const observed = t.balances + t.in_flight;
    const accounted = observed + t.locked_stake + destroyed;
    const ok = accounted === created;
    conserved &&= ok;
    assets[asset] = { ...t, created, destroyed, observed, accounted, discrepancy: accounted - created, conserved: ok };
  }
  const notes = conserved ? [] : ASSETS.filter((a) => !assets[a]!.conserved).map((a) => `${a} not conserved: discrepancy ${assets[a]!.discrepancy}`);
  return {
    genesis_supply: i.genesisSupply,
    assets,
    accounts,
    blocks: i.blocks,
    leases: leaseCount,
    pending: pendingCount,
    conserved,
    notes,
  };
}
