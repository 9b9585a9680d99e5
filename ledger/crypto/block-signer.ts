// Finishing a block its owner built: hash it for the network, sign it (one key, or every member of
// a multisig keyset) and solve its proof of work. Wallets, the provider loop, tests and benchmarks
// all build blocks this one way.
import { computeBlockHash } from '../codec/block.js';
import { hexToBytes } from '../codec/hex.js';
import type { Block } from '../types.js';
import { publicKeyFromSeed, signEd25519 } from './ed25519.js';
import { solvePow } from './pow.js';

export interface FinishOptions {
  /** Network id the hash binds (ignored for genesis, which is hashed with ""). */
  networkId: string;
  /** PoW difficulty to meet (the node's advertised `pow_difficulty`); 0 = none. */
  difficulty: bigint;
  /** Single-key signer seed … */
  seed?: Uint8Array;
  /** … or the seeds of multisig keyset members (each adds a `signatures` entry). */
  seeds?: Uint8Array[];
}

export function finishBlock(block: Block, opts: FinishOptions): Block {
  const hash = computeBlockHash(block, block.type === 'genesis' ? '' : opts.networkId);
  const digest = hexToBytes(hash);
  const out: Block = { ...block, hash };
  if (opts.seeds) {
    out.signature = '';
    out.signatures = opts.seeds.map((s) => ({ public_key: publicKeyFromSeed(s), signature: signEd25519(s, digest) }));
  } else if (opts.seed) {
    out.signatures = null;
    out.signature = signEd25519(opts.seed, digest);
  } else {
    throw new TypeError('finishBlock needs a seed or multisig seeds');
  }
  if (block.type !== 'genesis') out.pow_nonce = solvePow(hash, opts.difficulty, block.pow_nonce);
  return out;
}
