// The consumer's lease access key, read from the wallet directory (agent/wallet/wallet.ts layout):
// `<wallet>/access/<lease hash>.key` (one key per lease), else a wallet-wide `<wallet>/access.key`.
// Raw 32-byte ed25519 seeds, mode 0600. Never the account key (DECISIONS.md "Crypto").

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function accessKeyFile(walletDir: string, leaseHash: string): string {
  const perLease = join(walletDir, 'access', `${leaseHash}.key`);
  if (existsSync(perLease)) return perLease;
  const walletWide = join(walletDir, 'access.key');
  if (existsSync(walletWide)) return walletWide;
  throw new Error(`no access key for lease ${leaseHash}: expected ${perLease} or ${walletWide}`);
}

export function loadAccessSeed(walletDir: string, leaseHash: string): Uint8Array {
  const file = accessKeyFile(walletDir, leaseHash);
  const seed = readFileSync(file);
  if (seed.length !== 32) throw new Error(`${file} is not a raw 32-byte ed25519 seed`);
  return new Uint8Array(seed);
}
