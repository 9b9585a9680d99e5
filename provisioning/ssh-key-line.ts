// authorized_keys lines for ed25519 keys (provider.md §5.1). Every line that ends up inside a VM is
// built or checked here, so nothing unvalidated ever reaches a guest's files or a shell.

import { isLowerHex } from '../ledger/codec/hex.js';

const KEY_TYPE = 'ssh-ed25519';
const LINE_RE = /^ssh-ed25519 ([A-Za-z0-9+/]+={0,2})$/;

/** `ssh-ed25519 <base64(u32be(11) ‖ "ssh-ed25519" ‖ u32be(32) ‖ key)>` for a 64-hex public key. */
export function ed25519KeyLine(publicKeyHex: string): string {
  if (!isLowerHex(publicKeyHex, 64)) throw new Error('access key must be 64 lowercase hex characters');
  const type = Buffer.from(KEY_TYPE, 'ascii');
  const blob = Buffer.alloc(4 + type.length + 4 + 32);
  blob.writeUInt32BE(type.length, 0);
  type.copy(blob, 4);
  blob.writeUInt32BE(32, 4 + type.length);
  Buffer.from(publicKeyHex, 'hex').copy(blob, 8 + type.length);
  return `${KEY_TYPE} ${blob.toString('base64')}`;
}

/** True for exactly `ssh-ed25519 <base64>` whose blob is a well-formed 32-byte ed25519 key. */
export function isEd25519KeyLine(line: string): boolean {
  const match = LINE_RE.exec(line);
  if (!match) return false;
  const blob = Buffer.from(match[1]!, 'base64');
  if (blob.toString('base64') !== match[1]) return false;
  return blob.length === 51 && blob.readUInt32BE(0) === 11 &&
    blob.subarray(4, 15).toString('ascii') === KEY_TYPE && blob.readUInt32BE(15) === 32;
}

/** Returns the line unchanged when it is a valid ed25519 key line; throws otherwise. */
export function checkedKeyLine(line: string, what: string): string {
  if (!isEd25519KeyLine(line)) throw new Error(`${what} is not a valid "ssh-ed25519 <base64>" line`);
  return line;
}
