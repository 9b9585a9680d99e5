// Client-side block building for tests and benchmarks on devnet: the caller's own code fills the
// fields, hashes (ledger.md §7.1), signs the 32 hash bytes with the account's seed and solves the
// proof of work — the node only validates.

import { blockToJson } from '../../ledger/codec/block.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { finishBlock as signBlock } from '../../ledger/crypto/block-signer.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { devSeed } from '../../ledger/genesis/devnet.js';
import { emptyBlock, type Block } from '../../ledger/types.js';

export const DEVNET = 'devnet';
export const DEVNET_DIFFICULTY = 2n;

export interface DevKey {
  seed: Uint8Array;
  publicKey: string;
  address: string;
}

export function devKey(n: number): DevKey {
  const seed = devSeed(n);
  const publicKey = publicKeyFromSeed(seed);
  return { seed, publicKey, address: accountAddress(publicKey) };
}

/** Hash, sign and solve PoW (ledger/crypto/block-signer.ts); returns the block JSON object to POST. */
export function finishBlock(
  block: Block,
  key: DevKey,
  opts: { difficulty?: bigint; startNonce?: bigint; networkId?: string } = {},
): Record<string, unknown> {
  const finished = signBlock(
    { ...block, pow_nonce: opts.startNonce ?? 0n },
    { networkId: opts.networkId ?? DEVNET, difficulty: opts.difficulty ?? DEVNET_DIFFICULTY, seed: key.seed },
  );
  return blockToJson(finished);
}

export function sendBlock(
  from: DevKey,
  p: { previous: string; balanceAfter: bigint; to: string; amount: bigint; timestamp: bigint; asset?: string },
): Block {
  return {
    ...emptyBlock('send'),
    account: from.address,
    previous: p.previous,
    balance: p.balanceAfter,
    timestamp: p.timestamp,
    asset: p.asset ?? 'XE',
    destination: p.to,
    amount: p.amount,
  };
}

export function receiveBlock(
  to: DevKey,
  p: { previous: string; balanceAfter: bigint; source: string; timestamp: bigint; asset?: string },
): Block {
  return {
    ...emptyBlock('receive'),
    account: to.address,
    previous: p.previous,
    balance: p.balanceAfter,
    timestamp: p.timestamp,
    asset: p.asset ?? 'XE',
    source: p.source,
    // The key is declared on a single-key account's opening block only (ledger.md §7.2).
    pub_key: p.previous === '0' ? to.publicKey : '',
  };
}

/** Unix ns now, with sub-microsecond digits so a rounding through a double would show. */
export function nowNsExact(): bigint {
  return BigInt(Date.now()) * 1_000_000n + 123_457n;
}
