// A consumer's wallet on disk: the account seed and, separately, one access key per lease
// (DECISIONS.md "Crypto": the access key is never the account key). Files are raw 32-byte
// ed25519 seeds, mode 0600, in a directory of mode 0700:
//   <dir>/account.key             the account's signing key
//   <dir>/access/<lease hash>.key the access key of one lease (VM logins, tunnel X-Signature)
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { devSeed } from '../../ledger/genesis/devnet.js';

export function defaultWalletDir(): string {
  return process.env.NETNODE_WALLET ?? join(homedir(), '.netnode', 'wallet');
}

export class Wallet {
  readonly publicKey: string;
  readonly address: string;

  private constructor(
    readonly dir: string,
    readonly seed: Uint8Array,
  ) {
    this.publicKey = publicKeyFromSeed(seed);
    this.address = accountAddress(this.publicKey);
  }

  /** Create a new wallet; refuses to overwrite an existing account key. */
  static create(dir: string): Wallet {
    const file = join(dir, 'account.key');
    if (existsSync(file)) throw new Error(`a wallet already exists in ${dir} (account.key is never overwritten)`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const seed = randomBytes(32);
    writeFileSync(file, seed, { mode: 0o600, flag: 'wx' });
    return new Wallet(dir, seed);
  }

  static open(dir: string): Wallet {
    const file = join(dir, 'account.key');
    if (!existsSync(file)) throw new Error(`no wallet in ${dir}: run \`netnode wallet create\` first`);
    return new Wallet(dir, readSeed(file));
  }

  /** A wallet over one of the public devnet keys (dev1…dev9), keeping access keys in `dir`. */
  static dev(n: number, dir: string): Wallet {
    return new Wallet(dir, devSeed(n));
  }

  /** A fresh access key for a lease about to be opened (saved under the lease hash once known). */
  newAccessSeed(): Uint8Array {
    return randomBytes(32);
  }

  saveAccessSeed(leaseHash: string, seed: Uint8Array): string {
    const dir = join(this.dir, 'access');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${leaseHash}.key`);
    writeFileSync(file, seed, { mode: 0o600 });
    chmodSync(file, 0o600);
    return file;
  }

  accessSeed(leaseHash: string): Uint8Array {
    const file = join(this.dir, 'access', `${leaseHash}.key`);
    if (!existsSync(file)) throw new Error(`no access key for lease ${leaseHash} in ${this.dir}/access`);
    return readSeed(file);
  }
}

function readSeed(file: string): Uint8Array {
  const seed = readFileSync(file);
  if (seed.length !== 32) throw new Error(`${file} is not a 32-byte ed25519 seed`);
  return new Uint8Array(seed);
}
