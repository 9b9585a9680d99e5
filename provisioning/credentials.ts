// The generated user of a VM (provider.md §5.1): `net-` + 8 random lowercase hex characters and a
// 24-character password from [A-Za-z0-9], both from a cryptographic random source.

import { randomBytes, randomInt } from 'node:crypto';

export interface VmCredentials {
  username: string;
  password: string;
}

const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PASSWORD_LENGTH = 24;
export const USERNAME_RE = /^net-[0-9a-f]{8}$/;
export const PASSWORD_RE = /^[A-Za-z0-9]{24}$/;

export function generateCredentials(): VmCredentials {
  const username = `net-${randomBytes(4).toString('hex')}`;
  let password = '';
  // randomInt draws without modulo bias.
  for (let i = 0; i < PASSWORD_LENGTH; i++) password += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return { username, password };
}
