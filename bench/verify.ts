// Single-core ed25519 verification rate through node:crypto (the hot path) and @noble/ed25519.
import { pathToFileURL } from 'node:url';
import { publicKeyFromSeed, signEd25519, verifyEd25519, verifyEd25519Noble } from '../ledger/crypto/ed25519.js';

type Verifier = (publicKeyHex: string, message: Uint8Array, signatureHex: string) => boolean;

function rate(verifier: Verifier, ms: number): number {
  const seed = new Uint8Array(32).fill(7);
  const pub = publicKeyFromSeed(seed);
  const message = new Uint8Array(32).fill(0x5a);
  const signature = signEd25519(seed, message);
  // warm-up: the first call populates the key cache
  if (!verifier(pub, message, signature)) throw new Error('benchmark signature did not verify');
  const start = performance.now();
  const deadline = start + ms;
  let count = 0;
  while (performance.now() < deadline) {
    for (let i = 0; i < 64; i++) {
      if (!verifier(pub, message, signature)) throw new Error('benchmark signature did not verify');
    }
    count += 64;
  }
  return Math.round((count * 1000) / (performance.now() - start));
}

/** node:crypto verifications per second on one core (the yardstick of the throughput benchmarks). */
export function nodeCryptoVerifyRate(ms: number): number {
  return rate(verifyEd25519, ms);
}

/** Verifications per second on one core, measured for `ms` milliseconds per library. */
export function measureVerifyRate(ms: number): { nodeCrypto: number; noble: number } {
  return { nodeCrypto: nodeCryptoVerifyRate(ms), noble: rate(verifyEd25519Noble, ms) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = measureVerifyRate(2000);
  console.log(`ed25519 verify, single core: node:crypto ${r.nodeCrypto}/s, @noble/ed25519 ${r.noble}/s`);
}
