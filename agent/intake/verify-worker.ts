// A VerifyPool worker: checks ed25519 signatures over block hashes with node:crypto (OpenSSL) and
// computes proof-of-work values, exactly as the ledger does inline. Items arrive as unchecked hex
// (verify-pool.ts ITEM_HEX and POW_HASH_HEX characters each); an item that is not lowercase hex
// fails, as it would inline.
import { parentPort } from 'node:worker_threads';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { verifyEd25519Bytes } from '../../ledger/crypto/ed25519.js';
import { powValue } from '../../ledger/crypto/pow.js';
import { ITEM_HEX, POW_HASH_HEX, type VerifyRequest, type VerifyResponse } from './verify-pool.js';

/**
 * Each `width`-character item of `text` as bytes, or null where it is not lowercase hex. A batch
 * of well-formed items (the usual case) is checked and decoded in one pass each.
 */
function hexItems(text: string, width: number): (Buffer | null)[] {
  if (!isLowerHex(text)) return hexItemsOneByOne(text, width);
  const bytes = Buffer.from(text, 'hex');
  const size = width / 2;
  return Array.from({ length: bytes.length / size }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
}

function hexItemsOneByOne(text: string, width: number): (Buffer | null)[] {
  return Array.from({ length: text.length / width }, (_, i) => {
    const item = text.slice(i * width, (i + 1) * width);
    return isLowerHex(item) ? Buffer.from(item, 'hex') : null;
  });
}

parentPort!.on('message', ({ id, signatures, nonces, powHashes }: VerifyRequest) => {
  const items = hexItems(signatures, ITEM_HEX);
  const ok = new Uint8Array(items.length);
  items.forEach((item, i) => {
    ok[i] = item !== null && verifyEd25519Bytes(item.subarray(0, 32), item.subarray(32, 64), item.subarray(64, 128)) ? 1 : 0;
  });
  const powValues = new BigUint64Array(nonces.length);
  const powOk = new Uint8Array(nonces.length);
  for (let i = 0; i < nonces.length; i++) {
    const hash = powHashes.slice(i * POW_HASH_HEX, (i + 1) * POW_HASH_HEX);
    if (!isLowerHex(hash, POW_HASH_HEX)) continue;
    powValues[i] = powValue(nonces[i]!, hash);
    powOk[i] = 1;
  }
  parentPort!.postMessage({ id, ok, powValues, powOk } satisfies VerifyResponse, [ok.buffer, powValues.buffer, powOk.buffer]);
});
