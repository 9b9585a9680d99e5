// Running balances replayed from a chain (for staged validation at a parent position, ledger.md §14)
// and the spendable balance (§17.2).
import type { Block } from '../types.js';
import type { StoredLease } from './records.js';

type LeaseLookup = (hash: string) => StoredLease | undefined;

/** Running balances (§17.1) after the given blocks, oldest first. */
export function replayBalances(chain: { block: Block }[], lease: LeaseLookup): Map<string, bigint> {
  const running = new Map<string, bigint>();
  for (const { block } of chain) applyToRunning(running, block, lease);
  return running;
}

function applyToRunning(running: Map<string, bigint>, b: Block, lease: LeaseLookup): void {
  running.set(b.asset === '' ? 'XE' : b.asset, b.balance);
  if (b.type === 'lease_settle') {
    const stake = lease(b.source)?.stake ?? 0n;
    running.set('XUSD', (running.get('XUSD') ?? 0n) + stake);
  }
}

/**
 * Per asset: the balance at the final-height watermark, minus every outflow (a drop in that
 * asset's balance) of the unfinalized blocks above it; unfinalized inflows are ignored. Empty when
 * nothing is finalized.
 */
export function computeSpendable(
  chain: { block: Block; height: number }[],
  finalHeight: number,
  lease: LeaseLookup,
): Map<string, bigint> {
  if (finalHeight === 0) return new Map();
  const running = new Map<string, bigint>();
  let spendable = new Map<string, bigint>();
  for (const { block, height } of chain) {
    if (height <= finalHeight) {
      applyToRunning(running, block, lease);
      if (height === finalHeight) spendable = new Map(running);
      continue;
    }
    const asset = block.asset === '' ? 'XE' : block.asset;
    const prev = running.get(asset) ?? 0n;
    if (block.balance < prev) {
      const left = (spendable.get(asset) ?? 0n) - (prev - block.balance);
      spendable.set(asset, left > 0n ? left : 0n);
    }
    running.set(asset, block.balance);
  }
  return spendable;
}
