// Real OpenSSH client against provisioned VMs: keys from ssh-keygen, commands through `ssh`,
// password attempts through an SSH_ASKPASS script (no sshpass needed).

import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SshEndpoint } from '../../../provisioning/backend.js';

export interface KeyPair {
  file: string;
  /** Raw public key, 64 hex (a lease's access_pub_key). */
  hex: string;
  /** `ssh-ed25519 <base64>` without comment. */
  line: string;
}

export function sshKeygen(dir: string, name: string): KeyPair {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', file]);
  const [type, b64] = readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/);
  return { file, hex: Buffer.from(b64!, 'base64').subarray(-32).toString('hex'), line: `${type} ${b64}` };
}

const BASE_OPTIONS = [
  '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR',
  '-o', 'ConnectTimeout=10', '-o', 'IdentitiesOnly=yes', '-F', '/dev/null',
];

export interface SshResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], input: string | undefined, env?: NodeJS.ProcessEnv): Promise<SshResult> {
  return new Promise((resolve) => {
    const child = execFile('ssh', args, { timeout: 30_000, env: env ?? process.env }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 255) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin!.end(input ?? '');
  });
}

/** Runs `command` as `user` with public-key authentication only. */
export function sshRun(ssh: SshEndpoint, user: string, key: KeyPair, command: string, input?: string): Promise<SshResult> {
  return run([...BASE_OPTIONS, '-o', 'BatchMode=yes', '-o', 'PreferredAuthentications=publickey',
    '-i', key.file, '-p', String(ssh.port), `${user}@${ssh.host}`, command], input);
}

/** Tries a password login (public key disabled); the password is fed by an SSH_ASKPASS script. */
export function sshPasswordAttempt(ssh: SshEndpoint, user: string, password: string, dir: string): Promise<SshResult> {
  const askpass = join(dir, `askpass-${user}`);
  writeFileSync(askpass, `#!/bin/sh\necho '${password}'\n`);
  chmodSync(askpass, 0o700);
  return run([...BASE_OPTIONS, '-o', 'PreferredAuthentications=password,keyboard-interactive',
    '-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1', '-p', String(ssh.port),
    `${user}@${ssh.host}`, 'true'], undefined,
  { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' });
}
