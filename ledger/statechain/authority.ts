// Signature authority (statechain.md §3): oracle blocks against the oracle keys, every other block
// against the DAO keyset, each as it stood before the block.
import { invalid } from '../errors.js';
import { hexToBytes } from '../codec/hex.js';
import { verifyEd25519 } from '../crypto/ed25519.js';
import type { StatechainBlock } from '../service.js';
import { checkEpochValue, oraclePolicy, parseStored, readKeyset, type KvReader } from './rules.js';

type Signatures = StatechainBlock['signatures'];

const first12 = (key: string): string => key.slice(0, 12);

/** Threshold multisig over the 32 raw hash bytes, checks in the order of §3. */
export function checkThreshold(
  hash: string,
  signatures: Signatures,
  keyset: { keys: string[]; threshold: number },
  kind: 'dao' | 'oracle',
): void {
  if (signatures.length === 0) throw invalid('no signatures');
  const seen = new Set<string>();
  for (const s of signatures) {
    if (seen.has(s.public_key)) throw invalid(`duplicate signer: ${first12(s.public_key)}`);
    seen.add(s.public_key);
  }
  const members = new Set(keyset.keys);
  for (const s of signatures) {
    if (!members.has(s.public_key)) {
      throw invalid(`signer ${first12(s.public_key)} not in ${kind === 'oracle' ? 'oracle keyset' : 'keyset'}`);
    }
  }
  const message = hexToBytes(hash);
  for (const s of signatures) {
    if (!verifyEd25519(s.public_key, message, s.signature)) {
      throw invalid(`sig from ${first12(s.public_key)}: signature verification failed`);
    }
  }
  if (signatures.length < keyset.threshold) {
    const what = kind === 'oracle' ? 'insufficient oracle signatures' : 'insufficient signatures';
    throw invalid(`${what}: got ${signatures.length}, need ${keyset.threshold}`);
  }
}

/** §3 for a block at index ≥ 1, `kv` being the KV before the block. */
export function checkAuthority(block: StatechainBlock, kv: KvReader): 'dao' | 'oracle' {
  const oracle = oraclePolicy(kv);
  if (oracle && block.ops.every((op) => op.key.startsWith(oracle.prefix))) {
    for (const op of block.ops) {
      if (op.action !== 'set' || !op.value) throw invalid('oracle block may only set keys');
    }
    const written = new Set<string>();
    for (const op of block.ops) {
      if (kv.get(op.key) !== null || written.has(op.key)) {
        throw invalid(`epoch key "${op.key}" already exists (write-once)`);
      }
      written.add(op.key);
    }
    for (const op of block.ops) checkEpochValue(op.key, oracle.prefix, parseStored(op.value!.text), kv);
    checkThreshold(block.hash, block.signatures, oracle, 'oracle');
    return 'oracle';
  }
  if (oracle) {
    const hit = block.ops.find((op) => op.key.startsWith(oracle.prefix));
    if (hit) throw invalid(`DAO block cannot write to oracle prefix "${oracle.prefix}" (key: ${hit.key})`);
  }
  const dao = kv.get('sys.dao_keyset');
  if (dao === null) throw invalid('sys.dao_keyset is not set');
  checkThreshold(block.hash, block.signatures, readKeyset(dao), 'dao');
  return 'dao';
}
