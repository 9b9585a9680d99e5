// A stand-in "VM" for gateway and tunnel tests: a real OpenSSH sshd on a random loopback port with
// its own host key, authorized_keys (the lease's access key + the gateway key) and log, configured
// like a leased machine's sshd (provider.md §5.1: public-key logins only, sftp subsystem).

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface StandInVm {
  host: string;
  port: number;
  dir: string;
  /** Count of TCP connections sshd has logged so far. */
  connections(): number;
  log(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function waitForPort(host: string, port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startStandInVm(authorizedKeyLines: string[], extraConfig: string[] = []): Promise<StandInVm> {
  const dir = mkdtempSync(join(tmpdir(), 'netnode-vm-'));
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_ed25519')]);
  writeFileSync(join(dir, 'authorized_keys'), authorizedKeyLines.map((l) => `${l}\n`).join(''), { mode: 0o600 });
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_ed25519')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    'UsePAM no',
    'StrictModes no',
    'Subsystem sftp internal-sftp',
    'LogLevel VERBOSE',
    'AcceptEnv LANG LC_*',
    'MaxStartups 100',
    'MaxSessions 100',
    ...extraConfig,
  ];
  writeFileSync(join(dir, 'sshd_config'), config.join('\n') + '\n');
  let log = '';
  const child: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort('127.0.0.1', port);
  // The readiness probe is one logged connection; wait for its line so later counts are stable.
  const deadline = Date.now() + 5000;
  while (!log.includes('Connection from ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return {
    host: '127.0.0.1',
    port,
    dir,
    connections: () => (log.match(/Connection from /g) ?? []).length,
    log: () => log,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
