// Shared pieces of the gateway and tunnel tests: a lease table behind the gateway's LeaseAccess
// port (the ledger's lease records reduced to what the gateway reads), access keys as the consumer
// holds them, and an OpenSSH client configuration that applies to jump hosts too.

import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publicKeyFromSeed, signEd25519 } from '../../../ledger/crypto/ed25519.js';
import type { LeaseAccess, LeaseAccessRecord, VmEndpoint } from '../../../gateway/lease-access.js';
import { ed25519Blob, opensshPrivateKey } from '../../../gateway/ssh/keys.js';

export const PROVIDER = 'a'.repeat(64);
export const OTHER_PROVIDER = 'b'.repeat(64);

export class LeaseTable implements LeaseAccess {
  readonly localProvider = PROVIDER;
  private readonly leases = new Map<string, LeaseAccessRecord>();
  private readonly endpoints = new Map<string, VmEndpoint>();

  put(leaseHash: string, record: LeaseAccessRecord, endpoint?: VmEndpoint): void {
    this.leases.set(leaseHash, record);
    if (endpoint) this.endpoints.set(leaseHash, endpoint);
  }

  lease(leaseHash: string): LeaseAccessRecord | null {
    return this.leases.get(leaseHash) ?? null;
  }

  async vmEndpoint(leaseHash: string): Promise<VmEndpoint | null> {
    return this.endpoints.get(leaseHash) ?? null;
  }
}

export interface AccessKey {
  seed: Uint8Array;
  /** 64 hex: the lease's access_pub_key. */
  pub: string;
  /** `ssh-ed25519 AAAA…` for authorized_keys. */
  line: string;
  /** OpenSSH private key text. */
  privateKey: string;
  /** X-Signature for a lease. */
  sign(leaseHash: string): string;
  /** Writes the private key (mode 0600) and returns its path. */
  writeTo(dir: string, name: string): string;
}

export function newAccessKey(): AccessKey {
  const seed = new Uint8Array(randomBytes(32));
  const pub = publicKeyFromSeed(seed);
  const privateKey = opensshPrivateKey(seed, 'test-access');
  return {
    seed,
    pub,
    line: `ssh-ed25519 ${ed25519Blob(Buffer.from(pub, 'hex')).toString('base64')}`,
    privateKey,
    sign: (leaseHash) => signEd25519(seed, Buffer.from(leaseHash, 'hex')),
    writeTo(dir, name) {
      const file = join(dir, name);
      writeFileSync(file, privateKey, { mode: 0o600 });
      return file;
    },
  };
}

export function randomLeaseHash(): string {
  return randomBytes(32).toString('hex');
}

/** `-F` file: options on the command line do not reach `-J` hops, a config file does. */
export function sshClientConfig(dir: string, identityFile: string, extra: string[] = []): string {
  const file = join(dir, 'ssh_config');
  writeFileSync(
    file,
    [
      'Host *',
      `  IdentityFile ${identityFile}`,
      '  IdentitiesOnly yes',
      '  BatchMode yes',
      '  StrictHostKeyChecking no',
      '  UserKnownHostsFile /dev/null',
      '  LogLevel ERROR',
      '  ConnectTimeout 10',
      ...extra.map((line) => `  ${line}`),
      '',
    ].join('\n'),
  );
  return file;
}
