// ed25519 keys in OpenSSH's formats: the gateway's host key and VM key (provider.md §5.1, §6), and
// the consumer's access key handed to the `ssh` client.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ssh2 from 'ssh2';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';

const KEY_TYPE = 'ssh-ed25519';

function sshString(data: Buffer | string): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data) : data;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

/** The SSH wire blob of an ed25519 public key: string "ssh-ed25519" ‖ string key. */
export function ed25519Blob(publicKey: Uint8Array): Buffer {
  return Buffer.concat([sshString(KEY_TYPE), sshString(Buffer.from(publicKey))]);
}

/** The 32 raw key bytes of an `ssh-ed25519` wire blob, or null for any other blob. */
export function rawKeyOfEd25519Blob(blob: Buffer): Buffer | null {
  if (blob.length !== 51 || blob.readUInt32BE(0) !== 11) return null;
  if (blob.subarray(4, 15).toString('latin1') !== KEY_TYPE || blob.readUInt32BE(15) !== 32) return null;
  return blob.subarray(19);
}

/** An unencrypted `-----BEGIN OPENSSH PRIVATE KEY-----` file for a raw 32-byte ed25519 seed. */
export function opensshPrivateKey(seed: Uint8Array, comment = ''): string {
  const pub = Buffer.from(publicKeyFromSeed(seed), 'hex');
  const blob = ed25519Blob(pub);
  const check = randomBytes(4);
  let priv = Buffer.concat([
    check,
    check,
    sshString(KEY_TYPE),
    sshString(pub),
    sshString(Buffer.concat([Buffer.from(seed), pub])),
    sshString(comment),
  ]);
  const pad = (8 - (priv.length % 8)) % 8;
  priv = Buffer.concat([priv, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    Buffer.from([0, 0, 0, 1]),
    sshString(blob),
    sshString(priv),
  ]);
  const lines = body.toString('base64').match(/.{1,70}/g)!;
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** `ssh-ed25519 AAAA…` for an OpenSSH private key text. */
export function publicLineOfPrivateKey(privateKeyText: string): string {
  const parsed = ssh2.utils.parseKey(privateKeyText);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  if (key.type !== KEY_TYPE) throw new Error(`expected an ${KEY_TYPE} key, found ${key.type}`);
  return `${KEY_TYPE} ${key.getPublicSSH().toString('base64')}`;
}

/** Reads `file`, or creates it (ed25519, OpenSSH format, mode 0600) on first start. */
export function loadOrCreateKey(file: string, comment: string): string {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, opensshPrivateKey(randomBytes(32), comment), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  const text = readFileSync(file, 'utf8');
  publicLineOfPrivateKey(text); // refuses a file that is not an ed25519 key
  return text;
}

export function hostKeyPath(dataDir: string): string {
  return join(dataDir, 'ssh_host_key');
}

export function gatewayVmKeyPath(dataDir: string): string {
  return join(dataDir, 'gateway_vm_key');
}

/** The gateway's key for its own hop into VMs (created on first use). */
export function loadGatewayVmKey(dataDir: string): string {
  return loadOrCreateKey(gatewayVmKeyPath(dataDir), 'netnode-gateway');
}

/** The `ssh-ed25519 AAAA…` line backends install for root (provider.md §5.1). */
export function gatewayVmPublicKeyLine(dataDir: string): string {
  return publicLineOfPrivateKey(loadGatewayVmKey(dataDir));
}
