// Representative votes (ledger.md §15.1): ed25519 directly over 138 bytes starting with version 0x02.
import { isLowerHex } from '../codec/hex.js';
import { ByteWriter } from '../codec/bytes.js';
import { publicKeyFromSeed, signEd25519, verifyEd25519 } from './ed25519.js';

export const VOTE_VERSION = 0x02;
export const VOTE_BYTES_LENGTH = 138;

export interface Vote {
  rep_pub_key: string;
  block_hash: string;
  conflict_account: string;
  conflict_previous: string;
  timestamp: bigint;
  final: boolean;
  signature: string;
}

/** Throws RangeError when a field is not of its shape (callers check shapes first, §4). */
export function voteBytes(v: Omit<Vote, 'signature'>): Uint8Array {
  for (const [name, value] of [
    ['rep_pub_key', v.rep_pub_key],
    ['block_hash', v.block_hash],
    ['conflict_account', v.conflict_account],
  ] as const) {
    if (!isLowerHex(value, 64)) throw new RangeError(`vote ${name} must be 64 lowercase hex characters`);
  }
  if (v.conflict_previous !== '0' && !isLowerHex(v.conflict_previous, 64)) {
    throw new RangeError('vote conflict_previous must be "0" or 64 lowercase hex characters');
  }
  const w = new ByteWriter(VOTE_BYTES_LENGTH);
  w.u8(VOTE_VERSION).rawHex(v.rep_pub_key).rawHex(v.block_hash).rawHex(v.conflict_account);
  if (v.conflict_previous === '0') w.zeros(32);
  else w.rawHex(v.conflict_previous);
  w.i64be(v.timestamp).u8(v.final ? 1 : 0);
  return w.finish();
}

/** Signs with `seed`; `rep_pub_key` must be that seed's public key. */
export function signVote(seed: Uint8Array, v: Omit<Vote, 'signature'>): Vote {
  if (publicKeyFromSeed(seed) !== v.rep_pub_key) throw new RangeError('vote rep_pub_key is not the signing key');
  return { ...v, signature: signEd25519(seed, voteBytes(v)) };
}

/** A representative's signing key with its public key, derived once (a node signs a vote per block). */
export interface VoteSigner {
  seed: Uint8Array;
  pubKey: string;
}

export function voteSigner(seed: Uint8Array): VoteSigner {
  return { seed, pubKey: publicKeyFromSeed(seed) };
}

/**
 * The same vote, signed on first read of `signature`. A node's own votes count in its own tally
 * unsigned, and most never leave the node (a lone representative signs nothing it does not send),
 * so ed25519 signing is paid only for votes that are gossiped, answered or shown.
 */
export function signVoteOnDemand(signer: VoteSigner, v: Omit<Vote, 'signature'>): Vote {
  if (signer.pubKey !== v.rep_pub_key) throw new RangeError('vote rep_pub_key is not the signing key');
  const fields = { ...v };
  let signature: string | undefined;
  return {
    ...v,
    get signature(): string {
      return (signature ??= signEd25519(signer.seed, voteBytes(fields)));
    },
  };
}

/** False on any malformed field or a bad signature; never throws. */
export function verifyVote(v: Vote): boolean {
  let bytes: Uint8Array;
  try {
    bytes = voteBytes(v);
  } catch {
    return false;
  }
  return verifyEd25519(v.rep_pub_key, bytes, v.signature);
}
