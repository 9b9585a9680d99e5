// The SSH gateway (provider.md §6) with real clients — OpenSSH `ssh -J`, a pty session driven in tmux,
// `sftp`, an ssh2 client doing forwardOut + a second login — against a Docker-backend VM provisioned
// as for a lease. Refused logins are aimed at a lease whose "VM" is a plain sshd of our own, whose
// log counts every TCP connection: nothing may reach it.

import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import ssh2, { type Client, type ClientChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOfIp } from '../../agent/api/client-key.js';
import { runSshCommand } from '../../agent/cli/ssh.js';
import { gatewayVmPublicKeyLine, hostKeyPath, publicLineOfPrivateKey } from '../../gateway/ssh/keys.js';
import { SshGateway } from '../../gateway/ssh/server.js';
import { startDockerLeaseVm, type LeaseVm } from './helpers/lease-vm.js';
import { startStandInVm, type StandInVm } from './helpers/stand-in-vm.js';
import {
  LeaseTable,
  newAccessKey,
  OTHER_PROVIDER,
  PROVIDER,
  randomLeaseHash,
  sshClientConfig,
  type AccessKey,
} from './helpers/gateway-fixtures.js';

const run = promisify(execFile);

let dir: string;
let dataDir: string;
let vm: LeaseVm;
let counted: StandInVm;
let gateway: SshGateway;
let gwPort: number;
let access: AccessKey;
let config: string;
const leases = new LeaseTable();
const lease = randomLeaseHash();
/** Served like `lease`, but its VM is the connection-counting sshd. */
const countedLease = randomLeaseHash();

async function ssh(args: string[], timeout = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('ssh', ['-F', config, ...args], { timeout });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function sshLogin(user: string, ...command: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return ssh(['-p', String(gwPort), `${user}@127.0.0.1`, ...command]);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netnode-gw-test-'));
  dataDir = join(dir, 'data');
  access = newAccessKey();
  config = sshClientConfig(dir, access.writeTo(dir, 'access_key'));
  vm = await startDockerLeaseVm(lease, access.pub, gatewayVmPublicKeyLine(dataDir));
  counted = await startStandInVm([access.line, gatewayVmPublicKeyLine(dataDir)]);
  leases.put(lease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: vm.host, port: vm.port });
  leases.put(countedLease, { state: 'accepted', provider: PROVIDER, accessPubKey: access.pub }, { host: counted.host, port: counted.port });
  gateway = new SshGateway({ dataDir, access: leases, clientKeyOfIp: keyOfIp, logger: pino({ level: 'silent' }) });
  gwPort = await gateway.listen(0, '127.0.0.1');
}, 600_000);

afterAll(async () => {
  await gateway?.close();
  await vm?.stop();
  await counted?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('ssh gateway: keys', () => {
  it('keeps an ed25519 host key in OpenSSH format, mode 0600, across restarts', async () => {
    const file = hostKeyPath(dataDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----')).toBe(true);
    // OpenSSH itself reads the file and derives the same public key.
    const fromOpenssh = execFileSync('ssh-keygen', ['-y', '-f', file]).toString().trim().split(' ').slice(0, 2).join(' ');
    expect(fromOpenssh).toBe(publicLineOfPrivateKey(text));
    const again = new SshGateway({ dataDir, access: leases, clientKeyOfIp: keyOfIp, logger: pino({ level: 'silent' }) });
    await again.close().catch(() => {});
    expect(readFileSync(file, 'utf8')).toBe(text);
    // The gateway key the backends install for root is stable too.
    expect(gatewayVmPublicKeyLine(dataDir)).toMatch(/^ssh-ed25519 AAAA[A-Za-z0-9+/]+=*$/);
    expect(statSync(join(dataDir, 'gateway_vm_key')).mode & 0o777).toBe(0o600);
  });
});

describe('ssh gateway: logins and channels', () => {
  it('ssh -J <lease>@gateway root@vm runs a command end-to-end with the VM', async () => {
    const r = await ssh(['-J', `${lease}@127.0.0.1:${gwPort}`, 'root@vm', 'echo jump-$((6*7)); whoami']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('jump-42\nroot\n');
  });

  it('ssh <lease>@gateway runs exec commands in the VM and returns their exit status', async () => {
    const r = await sshLogin(lease, 'echo out; echo err >&2; exit 7');
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\n');
    // stdin reaches the command, and its EOF too (`wc` ends).
    const child = spawn('ssh', ['-F', config, '-p', String(gwPort), `${lease}@127.0.0.1`, 'wc -c']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin.end('x'.repeat(100_000));
    const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(status).toBe(0);
    expect(out.trim()).toBe('100000');
  });

  it('an interactive pty session (tmux) lands in a root shell in the VM and returns its exit status', async () => {
    const session = `gw${randomBytes(4).toString('hex')}`;
    const statusFile = join(dir, `${session}.status`);
    const cmd = `ssh -F ${config} -tt -p ${gwPort} ${lease}@127.0.0.1; echo $? > ${statusFile}; sleep 60`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '120', '-y', '40', cmd]);
    let screen = '';
    try {
      await waitFor(() => /# ?$/m.test((screen = capture(session) || screen)), () => `a root prompt, screen: ${screen}`);
      execFileSync('tmux', ['send-keys', '-t', session, 'tty; stty size; echo "user=$(id -un) term=$TERM"; exit 5', 'Enter']);
      await waitFor(() => {
        screen = capture(session) || screen;
        return existsSync(statusFile) && readFileSync(statusFile, 'utf8').trim() !== '';
      }, 'the session to end');
    } finally {
      spawnSync('tmux', ['kill-session', '-t', session]);
    }
    expect(readFileSync(statusFile, 'utf8').trim()).toBe('5');
    expect(screen).toMatch(/\/dev\/pts\/\d+/);
    expect(screen).toContain('40 120');
    expect(screen).toContain('user=root term=');
  });

  it('sftp through the gateway puts and gets a file with identical bytes', async () => {
    const local = join(dir, 'upload.bin');
    const back = join(dir, 'download.bin');
    const remote = '/root/remote.bin';
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(local, bytes);
    writeFileSync(join(dir, 'batch'), `put ${local} ${remote}\nget ${remote} ${back}\n`);
    const { stderr } = await run('sftp', ['-F', config, '-P', String(gwPort), '-b', join(dir, 'batch'), `${lease}@127.0.0.1`], {
      timeout: 30_000,
    });
    expect(stderr).toBe('');
    expect(readFileSync(back).equals(bytes)).toBe(true);
    const inVm = await sshLogin(lease, `sha256sum ${remote}`);
    expect(inVm.stdout.split(' ')[0]).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('ssh2 forwardOut, then a second login as root over that channel, runs echo', async () => {
    const gw = await ssh2Connect({ port: gwPort, username: lease, privateKey: access.privateKey });
    try {
      const stream = await new Promise<ClientChannel>((resolve, reject) =>
        gw.forwardOut('127.0.0.1', 0, 'anything.invalid', 4444, (err, s) => (err ? reject(err) : resolve(s))),
      );
      const inner = await ssh2Connect({ sock: stream, username: 'root', privateKey: access.privateKey });
      try {
        expect(await ssh2Exec(inner, 'echo second-hop')).toBe('second-hop\n');
      } finally {
        inner.end();
      }
    } finally {
      gw.end();
    }
  });

  it('forwards window-change, env and signals, and passes exit-signal back (ssh2 client)', async () => {
    const gw = await ssh2Connect({ port: gwPort, username: lease, privateKey: access.privateKey });
    try {
      const shell = await new Promise<ClientChannel>((resolve, reject) =>
        gw.shell({ rows: 24, cols: 80, term: 'xterm' }, (err, ch) => (err ? reject(err) : resolve(ch))),
      );
      let out = '';
      shell.on('data', (d: Buffer) => (out += d.toString()));
      shell.setWindow(33, 111, 0, 0);
      await new Promise((r) => setTimeout(r, 200));
      shell.write('stty size; exit 4\n');
      const code = await new Promise<number>((resolve) => shell.once('exit', (c: number) => resolve(c)));
      expect(code).toBe(4);
      expect(out).toContain('33 111');

      const killed = await new Promise<unknown[]>((resolve, reject) =>
        gw.exec('kill -KILL $$', (err, ch) => {
          if (err) return reject(err);
          ch.on('data', () => {});
          ch.once('exit', (...args: unknown[]) => resolve(args));
        }),
      );
      expect(killed[0]).toBeNull();
      expect(killed[1]).toBe('SIGKILL'); // ssh2 prefixes SIG to the wire name

      const envOut = await new Promise<string>((resolve, reject) =>
        gw.exec('echo "lc=$LC_NETNODE"', { env: { LC_NETNODE: 'passed-on' } }, (err, ch) => {
          if (err) return reject(err);
          let out = '';
          ch.on('data', (d: Buffer) => (out += d.toString()));
          ch.once('close', () => resolve(out));
        }),
      );
      expect(envOut).toBe('lc=passed-on\n');

      // A signal request is passed on to the VM's sshd (which, for root sessions, OpenSSH then
      // declines: "session signalling requires privilege separation").
      const exitOfSignalled = await new Promise<unknown[]>((resolve, reject) =>
        gw.exec('sleep 1', (err, ch) => {
          if (err) return reject(err);
          ch.on('data', () => {});
          ch.once('exit', (...args: unknown[]) => resolve(args));
          setTimeout(() => ch.signal('TERM'), 200);
        }),
      );
      expect(exitOfSignalled[0]).toBe(0);
      expect(vm.log()).toMatch(/session_signal_req/);
    } finally {
      gw.end();
    }
  });

  it('netnode ssh --gateway opens the VM with the wallet access key', async () => {
    const wallet = join(dir, 'wallet');
    mkdirSync(wallet, { recursive: true, mode: 0o700 });
    // The wallet-wide access key file (one access key for the whole wallet).
    writeFileSync(join(wallet, 'access.key'), access.seed, { mode: 0o600 });
    const marker = '/root/cli-gateway.txt';
    const opts = ['-o', 'UserKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=no', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR'];
    const code = await runSshCommand([lease, '--gateway', `127.0.0.1:${gwPort}`, '--wallet', wallet, ...opts, '--', `echo gw-cli > ${marker}; exit 6`]);
    expect(code).toBe(6);
    expect((await sshLogin(lease, `cat ${marker}`)).stdout).toBe('gw-cli\n');
  });

  it('refuses port-forward requests and non-session channel types', async () => {
    const gw = await ssh2Connect({ port: gwPort, username: lease, privateKey: access.privateKey });
    try {
      await expect(
        new Promise<void>((resolve, reject) => gw.forwardIn('127.0.0.1', 0, (err) => (err ? reject(err) : resolve()))),
      ).rejects.toThrow();
      await expect(
        new Promise<void>((resolve, reject) => gw.openssh_forwardOutStreamLocal('/tmp/x.sock', (err) => (err ? reject(err) : resolve()))),
      ).rejects.toThrow();
    } finally {
      gw.end();
    }
  });
});

describe('ssh gateway: refused logins reach nothing', () => {
  it('wrong key, unknown lease, lease not accepted, other provider, no access key, bad username', async () => {
    const notAccepted = randomLeaseHash();
    const otherProvider = randomLeaseHash();
    const noKey = randomLeaseHash();
    const ep = { host: counted.host, port: counted.port };
    leases.put(notAccepted, { state: 'created', provider: PROVIDER, accessPubKey: access.pub }, ep);
    leases.put(otherProvider, { state: 'accepted', provider: OTHER_PROVIDER, accessPubKey: access.pub }, ep);
    leases.put(noKey, { state: 'accepted', provider: PROVIDER, accessPubKey: '' }, ep);
    const before = counted.connections();

    const wrongKey = newAccessKey();
    const wrongConfig = sshClientConfig(mkdtempSync(join(dir, 'wrong-')), wrongKey.writeTo(dir, 'wrong_key'));
    const wrong = await run('ssh', ['-F', wrongConfig, '-p', String(gwPort), `${countedLease}@127.0.0.1`, 'true']).catch((e) => e);
    expect(wrong.code).toBe(255);
    expect(wrong.stderr).toContain('Permission denied (publickey)');

    for (const user of [randomLeaseHash(), notAccepted, otherProvider, noKey, countedLease.toUpperCase(), 'root']) {
      const r = await sshLogin(user, 'true');
      expect(r.code, user).toBe(255);
      expect(r.stderr).toContain('Permission denied (publickey)');
    }
    // An unsigned probe of the right key is answered "key OK" but logs nothing in: a client holding
    // only the public key gets that answer and is still refused.
    const probeDir = mkdtempSync(join(dir, 'probe-'));
    writeFileSync(join(probeDir, 'only_pub.pub'), `${access.line}\n`);
    const probe = await run('ssh', ['-v', '-F', sshClientConfig(probeDir, join(probeDir, 'only_pub')), '-p', String(gwPort), `${countedLease}@127.0.0.1`, 'true']).catch((e) => e);
    expect(probe.code).toBe(255);
    expect(probe.stderr).toContain('Server accepts key');
    expect(probe.stderr).toContain('Permission denied (publickey)');

    // A jump through a refused login never opens the VM either.
    const jump = await ssh(['-J', `${notAccepted}@127.0.0.1:${gwPort}`, 'root@vm', 'true']);
    expect(jump.code).toBe(255);

    // Password and keyboard-interactive are never offered.
    const pw = await ssh(['-o', 'PreferredAuthentications=password', '-p', String(gwPort), `${countedLease}@127.0.0.1`, 'true']);
    expect(pw.code).toBe(255);

    expect(counted.connections()).toBe(before);
    // The counter does count: one real login through the gateway reaches that sshd.
    expect((await sshLogin(countedLease, 'echo counted')).stdout).toBe('counted\n');
    expect(counted.connections()).toBeGreaterThan(before);
  });

  it('closeLease ends the connections logged in for that lease', async () => {
    const gw = await ssh2Connect({ port: gwPort, username: lease, privateKey: access.privateKey });
    const closed = new Promise<void>((resolve) => gw.once('close', () => resolve()));
    gateway.closeLease(lease);
    await closed;
  });

  it('closes the 9th concurrent connection from one client address at once', async () => {
    const sockets = await Promise.all(Array.from({ length: 8 }, () => openAndReadBanner()));
    try {
      for (const s of sockets) expect(s.banner).toMatch(/^SSH-2\.0-netnode-gateway/);
      const ninth = await openAndReadBanner();
      expect(ninth.banner).toBe('');
      expect(ninth.closed).toBe(true);
    } finally {
      for (const s of sockets) s.socket.destroy();
    }
  });
});

async function openAndReadBanner(): Promise<{ socket: ReturnType<typeof connect>; banner: string; closed: boolean }> {
  const socket = connect(gwPort, '127.0.0.1');
  return await new Promise((resolve) => {
    let banner = '';
    let closed = false;
    socket.on('data', (d) => {
      banner += d.toString('latin1');
      if (banner.includes('\n')) resolve({ socket, banner, closed });
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      resolve({ socket, banner, closed });
    });
  });
}

function capture(session: string): string {
  return spawnSync('tmux', ['capture-pane', '-p', '-t', session]).stdout?.toString() ?? '';
}

async function waitFor(check: () => boolean, what: string | (() => string), timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function ssh2Connect(opts: Record<string, unknown>): Promise<Client> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({ host: '127.0.0.1', readyTimeout: 10_000, ...opts });
  });
}

function ssh2Exec(c: Client, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    c.exec(command, (err, ch) => {
      if (err) return reject(err);
      let out = '';
      ch.on('data', (d: Buffer) => (out += d.toString()));
      ch.on('close', () => resolve(out));
    });
  });
}
