// DockerBackend against the real engine and the real OpenSSH client: logins, refused passwords, sudo,
// limits seen from inside, capabilities, credentials hygiene, teardown, isolation, missing image.
// Fails (never skips) when Docker is not available.

import { execFileSync } from 'node:child_process';
import type Docker from 'dockerode';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { VmHandle, VmSpec } from '../../provisioning/backend.js';
import { generateCredentials } from '../../provisioning/credentials.js';
import { DockerBackend, NETNS_LABEL, VM_CAPABILITIES } from '../../provisioning/docker/backend.js';
import { FORWARD_CHAIN, INPUT_CHAIN, installVmIsolation } from '../../provisioning/docker/firewall.js';
import { HOLDER_LABEL } from '../../provisioning/docker/network-pool.js';
import { sshBannerAnswers } from '../../provisioning/ssh-ready.js';
import { containersOfLease, docker, failEveryTestOnSetupError, randomLeaseHash, requireDockerImage } from './helpers/docker-vm.js';
import { sshKeygen, sshPasswordAttempt, sshRun, type KeyPair } from './helpers/vm-ssh.js';

const CAP_NUMBERS: Record<string, number> = {
  CHOWN: 0, DAC_OVERRIDE: 1, FOWNER: 3, KILL: 5, SETGID: 6, SETUID: 7, NET_BIND_SERVICE: 10, SYS_CHROOT: 18, AUDIT_WRITE: 29,
};

const LIMITS_SCRIPT = `
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then c=/sys/fs/cgroup
  echo "cgroup=v2"; echo "mem=$(cat $c/memory.max)"; echo "swap=$(cat $c/memory.swap.max)"
  echo "cpuset=$(cat $c/cpuset.cpus)"; echo "quota=$(cut -d' ' -f1 $c/cpu.max)"; echo "period=$(cut -d' ' -f2 $c/cpu.max)"
  echo "pids=$(cat $c/pids.max)"
else c=/sys/fs/cgroup
  echo "cgroup=v1"; echo "mem=$(cat $c/memory/memory.limit_in_bytes)"
  echo "memsw=$(cat $c/memory/memory.memsw.limit_in_bytes)"
  echo "cpuset=$(cat $c/cpuset/cpuset.cpus)"; echo "quota=$(cat $c/cpu/cpu.cfs_quota_us)"; echo "period=$(cat $c/cpu/cpu.cfs_period_us)"
  echo "pids=$(cat $c/pids/pids.max)"
fi
echo "capbnd=$(awk '/^CapBnd/ {print $2}' /proc/1/status)"`;

function parseLimits(text: string): Record<string, string> {
  return Object.fromEntries(text.trim().split('\n').map((l) => l.split('=') as [string, string]));
}

/** The container owning a VM's network namespace: its warm-namespace holder, else the VM itself. */
async function networkContainer(vmId: string): Promise<Docker.ContainerInspectInfo> {
  const info = await docker.getContainer(vmId).inspect();
  const holder = info.Config.Labels[NETNS_LABEL];
  return holder === undefined ? info : docker.getContainer(holder).inspect();
}

function cpusetSize(set: string): number {
  return set.split(',').reduce((n, part) => {
    const [a, b] = part.split('-').map(Number);
    return n + (b === undefined ? 1 : b - a! + 1);
  }, 0);
}

describe('DockerBackend (real Docker, real ssh)', () => {
  let image: string;
  let dir: string;
  let leaseKey: KeyPair;
  let gatewayKey: KeyPair;
  let backend: DockerBackend;
  const created: string[] = [];

  function spec(overrides: Partial<VmSpec> = {}): VmSpec {
    const leaseHash = randomLeaseHash();
    created.push(leaseHash);
    return {
      leaseHash, vcpus: 1, memoryMb: 1024, diskGb: 10, accessPubKey: leaseKey.hex,
      gatewayAuthorizedKey: gatewayKey.line, ...generateCredentials(), ...overrides,
    };
  }

  const setup = failEveryTestOnSetupError();
  beforeAll(() => setup.run(async () => {
    image = await requireDockerImage();
    dir = mkdtempSync(join(tmpdir(), 'netnode-docker-test-'));
    leaseKey = sshKeygen(dir, 'lease');
    gatewayKey = sshKeygen(dir, 'gateway');
    backend = new DockerBackend({ image });
    await backend.check();
  }), 600_000);
  beforeEach(() => setup.check());

  afterAll(async () => {
    for (const h of created) await backend?.destroy(h);
    await backend?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('one machine, end to end', () => {
    let vm: VmSpec;
    let handle: VmHandle;

    beforeAll(async () => {
      if (setup.failed()) return;
      // Below the floors on purpose: 1 vCPU, 512 MiB, 5 GiB apply.
      vm = spec({ vcpus: 1, memoryMb: 256, diskGb: 1 });
      handle = await backend.create(vm);
    }, 120_000);

    it('is ready when sshd sends its banner, on 127.0.0.1 only, named and labelled after the lease', async () => {
      expect(handle.ssh.host).toBe('127.0.0.1');
      expect(await sshBannerAnswers(handle.ssh)).toBe(true);
      const info = await docker.getContainer(handle.backendId).inspect();
      expect(info.Name).toBe(`/netvm-${vm.leaseHash.slice(0, 12)}`);
      expect(info.Config.Labels['net.lease']).toBe(vm.leaseHash);
      expect(info.HostConfig.Privileged).toBe(false);
      expect(info.Mounts).toEqual([]);
      expect(info.HostConfig.Binds ?? []).toEqual([]);
      expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    });

    it('runs in the warm network namespace, whose holder is minimal and publishes sshd on 127.0.0.1 only', async () => {
      const info = await docker.getContainer(handle.backendId).inspect();
      const holderId = info.Config.Labels[NETNS_LABEL]!;
      expect(info.HostConfig.NetworkMode).toBe(`container:${holderId}`);
      const holder = await networkContainer(handle.backendId);
      expect(holder.Id).toBe(holderId);
      expect(holder.Name).toBe(`/netvm-${vm.leaseHash.slice(0, 12)}-net`);
      expect(holder.Config.Labels[HOLDER_LABEL]).toBeDefined();
      expect(Object.keys(holder.NetworkSettings.Networks)).toEqual(['netnode-vms']);
      const bindings = Object.values(holder.HostConfig.PortBindings ?? {}).flat() as { HostIp: string }[];
      expect(bindings.map((b) => b.HostIp)).toEqual(['127.0.0.1']);
      expect(Object.keys(holder.NetworkSettings.Ports)).toEqual(['22/tcp']);
      expect(holder.HostConfig.Privileged).toBe(false);
      expect(holder.HostConfig.CapDrop).toEqual(['ALL']);
      expect(holder.HostConfig.CapAdd ?? []).toEqual([]);
      expect(holder.HostConfig.ReadonlyRootfs).toBe(true);
      expect(holder.Config.User).toBe('65534:65534');
      expect(holder.Mounts).toEqual([]);
    });

    it('lets root and the generated user log in with the lease key', async () => {
      const root = await sshRun(handle.ssh, 'root', leaseKey, 'id -u; stat -c %a:%U /root/.ssh /root/.ssh/authorized_keys; cat /root/.ssh/authorized_keys');
      expect(root.code, root.stderr).toBe(0);
      const [uid, sshDir, akFile, accessLine, gatewayLine] = root.stdout.trim().split('\n');
      expect(uid).toBe('0');
      expect([sshDir, akFile]).toEqual(['700:root', '600:root']);
      expect(accessLine).toBe(leaseKey.line);
      expect(gatewayLine).toBe(gatewayKey.line);

      const user = await sshRun(handle.ssh, vm.username, leaseKey, 'id -un; stat -c %a:%U ~/.ssh ~/.ssh/authorized_keys');
      expect(user.code, user.stderr).toBe(0);
      expect(user.stdout.trim().split('\n')).toEqual([vm.username, '700:' + vm.username, '600:' + vm.username]);

      const viaGateway = await sshRun(handle.ssh, 'root', gatewayKey, 'id -u');
      expect(viaGateway.stdout.trim()).toBe('0');
      const gatewayAsUser = await sshRun(handle.ssh, vm.username, gatewayKey, 'true');
      expect(gatewayAsUser.code).not.toBe(0);
    });

    it('refuses password logins, for the user and for root, even with the right password', async () => {
      for (const user of [vm.username, 'root']) {
        const attempt = await sshPasswordAttempt(handle.ssh, user, vm.password, dir);
        expect(attempt.code).not.toBe(0);
        // The server offers public key authentication only.
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

    it('shows the limits inside: one core, 512 MiB hard limit without swap, pids, capabilities', async () => {
      const r = await sshRun(handle.ssh, 'root', leaseKey, LIMITS_SCRIPT);
      expect(r.code, r.stderr).toBe(0);
      const limits = parseLimits(r.stdout);
      const bytes = String(512 * 1024 * 1024);
      expect(limits.mem).toBe(bytes);
      if (limits.cgroup === 'v2') expect(limits.swap).toBe('0');
      else expect(limits.memsw).toBe(bytes); // memory+swap = memory: no swap
      expect(cpusetSize(limits.cpuset!)).toBe(1);
      expect(limits.pids).toBe('4096');
      const expectedMask = VM_CAPABILITIES.reduce((m, c) => m | (1n << BigInt(CAP_NUMBERS[c]!)), 0n);
      expect(BigInt(`0x${limits.capbnd}`)).toBe(expectedMask);
    });

    it('offers bash, setsid, sftp and a writable /root for job runners', async () => {
      const local = join(dir, 'job.sh');
      writeFileSync(local, 'echo "job ran as $(id -un) in $BASH_VERSION"\n');
      const mk = await sshRun(handle.ssh, 'root', leaseKey, 'mkdir -p /root/job');
      expect(mk.code).toBe(0);
      execFileSync('sftp', ['-q', '-b', '-', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
        '-o', 'LogLevel=ERROR', '-i', leaseKey.file, '-P', String(handle.ssh.port), `root@${handle.ssh.host}`],
      { input: `put ${local} /root/job/job.sh\n` });
      const run = await sshRun(handle.ssh, 'root', leaseKey, 'setsid bash /root/job/job.sh > /root/job/out; cat /root/job/out; command -v kill mkdir cat >/dev/null && echo tools');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^job ran as root in 5\.[\s\S]*\ntools\n$/);
    });

    it('never exposes the credentials: not in inspect, not in logs, provisioning files removed', async () => {
      const info = await docker.getContainer(handle.backendId).inspect();
      expect(JSON.stringify(info)).not.toContain(vm.password);
      const logs = (await docker.getContainer(handle.backendId).logs({ stdout: true, stderr: true })).toString('latin1');
      expect(logs).not.toContain(vm.password);
      const gone = await sshRun(handle.ssh, 'root', leaseKey, 'test ! -e /etc/netvm/provision && echo gone');
      expect(gone.stdout.trim()).toBe('gone');
    });

    it('comes back after a container restart with the same credentials, without re-provisioning', async () => {
      await docker.getContainer(handle.backendId).restart({ t: 1 });
      const listed = (await backend.list()).find((o) => o.leaseHash === vm.leaseHash)!;
      expect(listed.running).toBe(true);
      const deadline = Date.now() + 20_000;
      while (!(await sshBannerAnswers(listed.ssh!)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const user = await sshRun(listed.ssh!, vm.username, leaseKey, "sudo -S -p '' id -u", `${vm.password}\n`);
      expect(user.code, user.stderr).toBe(0);
      expect(user.stdout.trim()).toBe('0');
      handle = { ...handle, ssh: listed.ssh! };
    });

    it('starts again a VM that lost the start race with its namespace holder (daemon restart)', async () => {
      const holder = docker.getContainer((await networkContainer(handle.backendId)).Id);
      const vmContainer = docker.getContainer(handle.backendId);
      await vmContainer.stop({ t: 1 });
      await holder.stop({ t: 1 });
      await expect(vmContainer.start()).rejects.toThrow(/non running container/);
      await holder.start();
      const listed = (await backend.list()).find((o) => o.leaseHash === vm.leaseHash)!;
      expect(listed.running).toBe(true);
      expect((await vmContainer.inspect()).State.Running).toBe(true);
      const deadline = Date.now() + 20_000;
      while (!(await sshBannerAnswers(listed.ssh!)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const root = await sshRun(listed.ssh!, 'root', leaseKey, 'id -u');
      expect(root.stdout.trim()).toBe('0');
      handle = { ...handle, ssh: listed.ssh! };
    });

    it('is listed, and teardown leaves nothing behind, namespace holder included (idempotently)', async () => {
      const listed = (await backend.list()).find((o) => o.leaseHash === vm.leaseHash);
      expect(listed).toEqual({ leaseHash: vm.leaseHash, backendId: handle.backendId, running: true, ssh: handle.ssh });
      const holderId = (await networkContainer(handle.backendId)).Id;
      const volumesBefore = (await docker.listVolumes()).Volumes?.length ?? 0;
      await backend.destroy(vm.leaseHash);
      await backend.destroy(vm.leaseHash);
      expect(await containersOfLease(vm.leaseHash)).toEqual([]);
      await expect(docker.getContainer(handle.backendId).inspect()).rejects.toMatchObject({ statusCode: 404 });
      await expect(docker.getContainer(holderId).inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await backend.list()).some((o) => o.leaseHash === vm.leaseHash)).toBe(false);
      expect((await docker.listVolumes()).Volumes?.length ?? 0).toBe(volumesBefore);
      expect(await sshBannerAnswers(handle.ssh, 500)).toBe(false);
    });
  });

  it('uses a CPU quota when the host has fewer cores than vCPUs asked', async () => {
    const vm = spec({ vcpus: 64, memoryMb: 768 });
    const handle = await backend.create(vm);
    const limits = parseLimits((await sshRun(handle.ssh, 'root', leaseKey, LIMITS_SCRIPT)).stdout);
    expect(BigInt(limits.quota!)).toBe(64n * BigInt(limits.period!));
    expect(limits.mem).toBe(String(768 * 1024 * 1024));
    await backend.destroy(vm.leaseHash);
  }, 120_000);

  describe('isolation', () => {
    let server: Server;
    let port: number;
    let a: VmHandle;
    let b: VmHandle;
    let bIp: string;
    let gatewayIp: string;

    const probe = async (from: VmHandle, host: string, p: number): Promise<string> => {
      const r = await sshRun(from.ssh, 'root', leaseKey, `timeout 3 bash -c '</dev/tcp/${host}/${p}' 2>/dev/null && echo open || echo blocked`);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim();
    };

    beforeAll(async () => {
      if (setup.failed()) return;
      server = createServer((_req, res) => res.end('host service'));
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      port = (server.address() as { port: number }).port;
      const [sa, sb] = [spec(), spec()];
      // Created together: one joins the warm namespace, the other the bridge itself; both must be isolated.
      [a, b] = await Promise.all([backend.create(sa), backend.create(sb)]);
      const warmOnes = await Promise.all([a, b].map(async (h) => (await docker.getContainer(h.backendId).inspect()).Config.Labels[NETNS_LABEL] !== undefined));
      expect(warmOnes.sort()).toEqual([false, true]);
      bIp = (await networkContainer(b.backendId)).NetworkSettings.Networks['netnode-vms']!.IPAddress;
      // The host as the VM sees it: its default gateway (the bridge's address on the host).
      gatewayIp = (await sshRun(a.ssh, 'root', leaseKey, "ip -4 route show default | awk '{print $3}'")).stdout.trim();
      expect(gatewayIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    }, 120_000);

    afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    it('blocks connections from a VM to the host, by bridge address and by the host own address', async () => {
      const hostIps = Object.entries(networkInterfaces())
        .filter(([name]) => !name.startsWith('br-') && !name.startsWith('docker') && !name.startsWith('veth') && !name.startsWith('virbr'))
        .flatMap(([, addrs]) => addrs ?? []).filter((x) => x.family === 'IPv4' && !x.internal).map((x) => x.address);
      expect(hostIps.length).toBeGreaterThan(0);
      for (const target of [gatewayIp, ...hostIps]) expect(await probe(a, target, port)).toBe('blocked');
      // The probe does detect open ports: the VM's own sshd answers it.
      expect(await probe(a, '127.0.0.1', 22)).toBe('open');
      // And the host service is reachable from a container outside the VM network (default bridge).
      const control = execFileSync('docker', ['run', '--rm', '--network', 'bridge', '--entrypoint', 'bash', image, '-c',
        `gw=$(ip -4 route show default | awk '{print $3}'); timeout 3 bash -c "</dev/tcp/$gw/${port}" && echo "open $gw" || echo "blocked $gw"`]).toString().trim();
      expect(control).toMatch(/^open \d+\.\d+\.\d+\.\d+$/);
    });

    it('blocks connections from one VM to another VM', async () => {
      expect(await probe(a, bIp, 22)).toBe('blocked');
      const aIp = (await networkContainer(a.backendId)).NetworkSettings.Networks['netnode-vms']!.IPAddress;
      expect(aIp).not.toBe(bIp);
      expect(await probe(b, aIp, 22)).toBe('blocked');
      // B's sshd does listen on that address: the host reaches it directly.
      expect(await sshBannerAnswers({ host: bIp, port: 22 })).toBe(true);
    });

    it('installs the firewall rules idempotently', async () => {
      await installVmIsolation('br-netnode');
      await installVmIsolation('br-netnode');
      const input = execFileSync('iptables', ['-w', '-S', 'INPUT']).toString().split('\n');
      expect(input.filter((l) => l === `-A INPUT -i br-netnode -j ${INPUT_CHAIN}`)).toHaveLength(1);
      const user = execFileSync('iptables', ['-w', '-S', 'DOCKER-USER']).toString().split('\n');
      expect(user.filter((l) => l === `-A DOCKER-USER -i br-netnode -j ${FORWARD_CHAIN}`)).toHaveLength(1);
      const chain = execFileSync('iptables', ['-w', '-S', INPUT_CHAIN]).toString().trim().split('\n');
      expect(chain).toEqual([
        `-N ${INPUT_CHAIN}`,
        `-A ${INPUT_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
        `-A ${INPUT_CHAIN} -j DROP`,
      ]);
    });
  });

  it('fails with a readable reason when the image is missing, leaving nothing behind', async () => {
    const missing = new DockerBackend({ image: 'netnode-vm:missing000000' });
    const vm = spec();
    await expect(missing.create(vm)).rejects.toThrow('vm image netnode-vm:missing000000 is missing: build it with "netnode image build --backend docker"');
    await expect(missing.check()).rejects.toThrow(/is missing/);
    expect(await containersOfLease(vm.leaseHash)).toEqual([]);
  });

  it('refuses a malformed access key before anything reaches the guest', async () => {
    const vm = spec({ accessPubKey: 'zz'.repeat(32) });
    await expect(backend.create(vm)).rejects.toThrow('access key must be 64 lowercase hex characters');
    const badGateway = spec({ gatewayAuthorizedKey: `${gatewayKey.line}\nssh-ed25519 AAAAinjected` });
    await expect(backend.create(badGateway)).rejects.toThrow(/gateway key line is not a valid/);
    expect(await containersOfLease(vm.leaseHash)).toEqual([]);
  });
});
