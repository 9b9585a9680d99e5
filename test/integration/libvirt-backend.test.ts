// LibvirtBackend against the real libvirtd (domain type `qemu`, software emulation, unless
// NETNODE_LIBVIRT_DOMAIN_TYPE says `kvm`) and the real OpenSSH client: logins with the lease key,
// refused passwords, sudo, vCPUs/memory/disk seen from inside, isolation from the host, teardown.
// One machine for the whole file: software-emulated boots are slow. Fails (never skips) when
// libvirtd is not available.

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VmHandle, VmSpec } from '../../provisioning/backend.js';
import { generateCredentials } from '../../provisioning/credentials.js';
import {
  buildLibvirtImage,
  DEFAULT_LIBVIRT_IMAGE_DIR,
  libvirtImage,
  type LibvirtImage,
} from '../../provisioning/images/libvirt-image.js';
import { LibvirtBackend } from '../../provisioning/libvirt/backend.js';
import type { DomainType } from '../../provisioning/libvirt/domain-xml.js';
import { sshBannerAnswers } from '../../provisioning/ssh-ready.js';
import { sshKeygen, sshPasswordAttempt, sshRun, type KeyPair } from './helpers/vm-ssh.js';

const run = promisify(execFile);
const URI = 'qemu:///system';
const DOMAIN_TYPE = (process.env.NETNODE_LIBVIRT_DOMAIN_TYPE ?? 'qemu') as DomainType;
const IMAGE_DIR = process.env.NETNODE_LIBVIRT_IMAGE_DIR ?? DEFAULT_LIBVIRT_IMAGE_DIR;

function randomLeaseHash(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
}

function virshSucceeds(args: string[]): boolean {
  try {
    execFileSync('virsh', ['-q', '-c', URI, ...args], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('LibvirtBackend (real libvirtd, real ssh)', () => {
  let image: LibvirtImage;
  let dir: string;
  let stateDir: string;
  let leaseKey: KeyPair;
  let gatewayKey: KeyPair;
  let backend: LibvirtBackend;
  let vm: VmSpec;
  let handle: VmHandle;
  let bootMs: number;

  beforeAll(async () => {
    if (!virshSucceeds(['version'])) {
      throw new Error(`libvirtd is not reachable at ${URI} (start it: virtlogd -d && libvirtd -d)`);
    }
    image = await buildLibvirtImage({ dir: IMAGE_DIR }, (line) => process.stderr.write(`image: ${line}\n`));
    dir = mkdtempSync(join(tmpdir(), 'netnode-libvirt-test-'));
    // Under /var/tmp, traversable by the QEMU user (libvirt-qemu) that opens the overlay and seed.
    stateDir = mkdtempSync('/var/tmp/netnode-libvirt-state-');
    chmodSync(stateDir, 0o711);
    leaseKey = sshKeygen(dir, 'lease');
    gatewayKey = sshKeygen(dir, 'gateway');
    backend = new LibvirtBackend({ image, domainType: DOMAIN_TYPE, uri: URI, stateDir });
    await backend.check();

    // Disk below the floor on purpose (5 GiB applies); vCPUs and memory as asked.
    vm = {
      leaseHash: randomLeaseHash(), vcpus: 2, memoryMb: 768, diskGb: 2, accessPubKey: leaseKey.hex,
      gatewayAuthorizedKey: gatewayKey.line, ...generateCredentials(),
    };
    const started = Date.now();
    handle = await backend.create(vm);
    bootMs = Date.now() - started;
    process.stderr.write(`libvirt ${DOMAIN_TYPE}: provision request → SSH-ready in ${bootMs} ms\n`);
  }, 600_000);

  afterAll(async () => {
    if (vm) await backend?.destroy(vm.leaseHash);
    await backend?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('is ready when sshd sends its banner, at a host-only address, named and labelled after the lease', async () => {
    expect(bootMs).toBeGreaterThan(0);
    expect(handle.backendId).toBe(`netvm-${vm.leaseHash.slice(0, 12)}`);
    expect(handle.ssh.port).toBe(22);
    expect(handle.ssh.host).toMatch(/^10\.213\.\d+\.\d+$/);
    expect(await sshBannerAnswers(handle.ssh)).toBe(true);
    const desc = execFileSync('virsh', ['-q', '-c', URI, 'desc', handle.backendId], { encoding: 'utf8' });
    expect(desc.trim()).toBe(`netnode lease ${vm.leaseHash}`);
    const xml = execFileSync('virsh', ['-q', '-c', URI, 'dumpxml', handle.backendId], { encoding: 'utf8' });
    expect(xml).toContain(`<domain type='${DOMAIN_TYPE}'`);
    expect(xml).not.toContain(vm.password);
    expect(xml).not.toMatch(/<filesystem/); // no host directories mounted
  });

  it('lets root and the generated user log in with the lease key; root also with the gateway key', async () => {
    const root = await sshRun(handle.ssh, 'root', leaseKey, 'id -u; stat -c %a:%U /root/.ssh /root/.ssh/authorized_keys; cat /root/.ssh/authorized_keys');
    expect(root.code, root.stderr).toBe(0);
    const [uid, sshDir, akFile, accessLine, gatewayLine] = root.stdout.trim().split('\n');
    expect(uid).toBe('0');
    expect([sshDir, akFile]).toEqual(['700:root', '600:root']);
    expect(accessLine).toBe(leaseKey.line);
    expect(gatewayLine).toBe(gatewayKey.line);

    const user = await sshRun(handle.ssh, vm.username, leaseKey, 'id -un; stat -c %a:%U ~/.ssh ~/.ssh/authorized_keys');
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout.trim().split('\n')).toEqual([vm.username, `700:${vm.username}`, `600:${vm.username}`]);

    expect((await sshRun(handle.ssh, 'root', gatewayKey, 'id -u')).stdout.trim()).toBe('0');
    expect((await sshRun(handle.ssh, vm.username, gatewayKey, 'true')).code).not.toBe(0);
  });

  it('refuses password logins, for the user and for root, even with the right password', async () => {
    for (const user of [vm.username, 'root']) {
      const attempt = await sshPasswordAttempt(handle.ssh, user, vm.password, dir);
      expect(attempt.code).not.toBe(0);
      expect(attempt.stderr).toContain('Permission denied (publickey)');
    }
  });

  it('serves sudo with the generated password, and only with it', async () => {
    const ok = await sshRun(handle.ssh, vm.username, leaseKey, "sudo -S -p '' id -u", `${vm.password}\n`);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe('0');
    const wrong = await sshRun(handle.ssh, vm.username, leaseKey, "sudo -k; sudo -S -p '' id -u", 'not-the-password\n');
    expect(wrong.code).not.toBe(0);
  });

  it('shows the leased vCPUs and memory inside, and the disk floor of 5 GiB', async () => {
    const r = await sshRun(handle.ssh, 'root', leaseKey,
      "nproc; awk '/^MemTotal/ {print $2}' /proc/meminfo; cat /sys/block/vda/size; df -B1 --output=size / | tail -1");
    expect(r.code, r.stderr).toBe(0);
    const [nproc, memKiB, sectors, fsBytes] = r.stdout.trim().split('\n').map(Number);
    expect(nproc).toBe(2);
    // MemTotal is the RAM minus what the kernel keeps for itself (a few percent).
    expect(memKiB).toBeLessThanOrEqual(768 * 1024);
    expect(memKiB).toBeGreaterThan(768 * 1024 * 0.9);
    expect(sectors! * 512).toBe(5 * 1024 ** 3);
    // The root filesystem was grown to the virtual disk at boot (the base image is 2 GiB).
    expect(fsBytes).toBeGreaterThan(4.5 * 1024 ** 3);
  });

  it('offers bash, setsid, sftp and a writable /root for job runners', async () => {
    const local = join(dir, 'job.sh');
    writeFileSync(local, 'echo "job ran as $(id -un) in $BASH_VERSION"\n');
    expect((await sshRun(handle.ssh, 'root', leaseKey, 'mkdir -p /root/job')).code).toBe(0);
    execFileSync('sftp', ['-q', '-b', '-', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
      '-o', 'LogLevel=ERROR', '-i', leaseKey.file, '-P', String(handle.ssh.port), `root@${handle.ssh.host}`],
    { input: `put ${local} /root/job/job.sh\n` });
    const run = await sshRun(handle.ssh, 'root', leaseKey, 'setsid bash /root/job/job.sh > /root/job/out; cat /root/job/out; command -v kill mkdir cat >/dev/null && echo tools');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^job ran as root in 5\.[\s\S]*\ntools\n$/);
  });

  describe('isolation', () => {
    let server: Server;
    let port: number;

    beforeAll(async () => {
      server = createServer((s) => s.end('host service\n'));
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('keeps the guest away from the host services that the host itself reaches on the bridge', async () => {
      const gateway = handle.ssh.host.replace(/\d+$/, (last) => String(Number(last) - 1));
      // Control: the service answers on the bridge address from the host (asynchronously: the
      // server lives in this process).
      const fromHost = await run('bash', ['-c', `exec 3<>/dev/tcp/${gateway}/${port}; head -1 <&3`], { timeout: 5000 });
      expect(fromHost.stdout).toBe('host service\n');
      const fromGuest = await sshRun(handle.ssh, 'root', leaseKey,
        `timeout 5 bash -c 'exec 3<>/dev/tcp/${gateway}/${port}; head -1 <&3' && echo reached || echo blocked`);
      expect(fromGuest.stdout.trim()).toBe('blocked');
    });
  });

  it('is listed, and teardown leaves nothing behind (idempotently)', async () => {
    const listed = (await backend.list()).find((o) => o.leaseHash === vm.leaseHash);
    expect(listed).toEqual({ leaseHash: vm.leaseHash, backendId: handle.backendId, running: true, ssh: handle.ssh });
    const bridge = `nv-${vm.leaseHash.slice(0, 12)}`;
    expect(virshSucceeds(['net-info', handle.backendId])).toBe(true);
    expect(existsSync(join(stateDir, handle.backendId, 'seed.tar'))).toBe(true);

    await backend.destroy(vm.leaseHash);
    await backend.destroy(vm.leaseHash);

    expect(virshSucceeds(['dominfo', handle.backendId])).toBe(false);
    expect(virshSucceeds(['net-info', handle.backendId])).toBe(false);
    expect(existsSync(`/sys/class/net/${bridge}`)).toBe(false);
    expect(readdirSync(stateDir)).toEqual([]);
    expect((await backend.list()).some((o) => o.leaseHash === vm.leaseHash)).toBe(false);
    expect(await sshBannerAnswers(handle.ssh, 500)).toBe(false);
  });

  it('check() says when libvirtd is unreachable', async () => {
    const unreachable = new LibvirtBackend({
      image, domainType: DOMAIN_TYPE, uri: `qemu+unix:///system?socket=${join(dir, 'no-socket')}`, stateDir,
    });
    await expect(unreachable.check()).rejects.toThrow(/^libvirt: cannot connect to .*is libvirtd running\?$/s);
  });

  it('check() names the missing image and how to build it', async () => {
    const missing = libvirtImage({ dir: join(dir, 'no-images') });
    const broken = new LibvirtBackend({ image: missing, domainType: DOMAIN_TYPE, uri: URI, stateDir });
    await expect(broken.check()).rejects.toThrow(/base image netvm-[0-9a-f]{16} is missing .*netnode image build --backend libvirt/);
    await broken.close();
  });
});
