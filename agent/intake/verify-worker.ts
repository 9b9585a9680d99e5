// A VerifyPool worker: checks ed25519 signatures over block hashes with node:crypto (OpenSSL) and
// computes proof-of-work values, exactly as the ledger does inline. Items arrive packed
// (verify-pool.ts ITEM_BYTES and POW_PREIMAGE_BYTES each).
import { parentPort } from 'node:worker_threads';
import { verifyEd25519Bytes } from '../../ledger/crypto/ed25519.js';
import { POW_PREIMAGE_BYTES, powValueOfPreimage } from '../../ledger/crypto/pow.js';
import { ITEM_BYTES, type VerifyRequest, type VerifyResponse } from './verify-pool.js';

parentPort!.on('message', ({ id, packed, pow }: VerifyRequest) => {
  const bytes = new Uint8Array(packed);
  const ok = new Uint8Array(bytes.length / ITEM_BYTES);
  for (let i = 0, o = 0; i < ok.length; i++, o += ITEM_BYTES) {
    const publicKey = bytes.subarray(o, o + 32);
    const hash = bytes.subarray(o + 32, o + 64);
    const signature = bytes.subarray(o + 64, o + ITEM_BYTES);
    ok[i] = verifyEd25519Bytes(publicKey, hash, signature) ? 1 : 0;
  }
  const preimages = new Uint8Array(pow);
  const powValues = new BigUint64Array(preimages.length / POW_PREIMAGE_BYTES);
  for (let i = 0, o = 0; i < powValues.length; i++, o += POW_PREIMAGE_BYTES) {
    powValues[i] = powValueOfPreimage(preimages.subarray(o, o + POW_PREIMAGE_BYTES));
  }
  parentPort!.postMessage({ id, ok, powValues } satisfies VerifyResponse, [ok.buffer, powValues.buffer]);
});
