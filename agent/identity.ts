// The node's keys: the ledger identity (`<data>/node.key`, dev1 under --dev) and the libp2p
// identity (`<data>/p2p.key`), both raw 32-byte ed25519 seeds kept with mode 0600 (api.md §16.2).

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { accountAddress } from '../ledger/crypto/address.js';
import { publicKeyFromSeed } from '../ledger/crypto/ed25519.js';
import { devSeed } from '../ledger/genesis/devnet.js';
import { peerIdFromEd25519PublicKey } from './network/peer-id.js';

export interface NodeIdentity {
  seed: Uint8Array;
  publicKey: string;
  address: string;
  /** libp2p peer id derived from the p2p key. */
  peerId: string;
}

/** Read a 32-byte seed file, creating it (mode 0600) on first start. */
export function loadOrCreateSeed(path: string): Uint8Array {
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(32), { mode: 0o600, flag: 'wx' });
  }
  const seed = readFileSync(path);
  if (seed.length !== 32) throw new Error(`${path}: expected a raw 32-byte ed25519 seed, found ${seed.length} bytes`);
  return Uint8Array.from(seed);
}

export function loadIdentity(dataDir: string, dev: boolean): NodeIdentity {
  const seed = dev ? devSeed(1) : loadOrCreateSeed(join(dataDir, 'node.key'));
  const publicKey = publicKeyFromSeed(seed);
  const p2pSeed = loadOrCreateSeed(join(dataDir, 'p2p.key'));
  return {
    seed,
    publicKey,
    address: accountAddress(publicKey),
    peerId: peerIdFromEd25519PublicKey(publicKeyFromSeed(p2pSeed)),
  };
}
