// A VerifyPool worker: checks ed25519 signatures over block hashes with node:crypto (OpenSSL),
// exactly the check the ledger makes inline. Items arrive packed (verify-pool.ts ITEM_BYTES each).
import { parentPort } from 'node:worker_threads';
import { verifyEd25519Bytes } from '../../ledger/crypto/ed25519.js';
import { ITEM_BYTES, type VerifyRequest, type VerifyResponse } from './verify-pool.js';

parentPort!.on('message', ({ id, packed }: VerifyRequest) => {
  const bytes = new Uint8Array(packed);
  const ok = new Uint8Array(bytes.length / ITEM_BYTES);
  for (let i = 0, o = 0; i < ok.length; i++, o += ITEM_BYTES) {
    const publicKey = bytes.subarray(o, o + 32);
    const hash = bytes.subarray(o + 32, o + 64);
    const signature = bytes.subarray(o + 64, o + ITEM_BYTES);
    ok[i] = verifyEd25519Bytes(publicKey, hash, signature) ? 1 : 0;
  }
  parentPort!.postMessage({ id, ok } satisfies VerifyResponse, [ok.buffer]);
});
