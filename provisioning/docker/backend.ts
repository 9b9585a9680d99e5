// Docker backend (provider.md §5.1): one container per lease with a full Debian userland and sshd.
//
// Limits: vcpus → a cpuset of that many host cores when the host has them (least-used cores first),
// else a CPU quota; memory → hard limit with swap disabled (memory-swap = memory); a pids limit.
// Disk: a size limit needs storage-driver support (overlay2 on xfs with pquota, btrfs, zfs,
// devicemapper). overlay2 on ext4 — the common case — cannot cap a container's writable layer, so there
// the lease's disk_gb is not enforced (`docker ps --size` shows usage); the libvirt backend always
// enforces it.
//
// Isolation: never privileged, every capability dropped except what sshd, logins and sudo need, no host
// mounts, IPv6 off, a dedicated bridge with inter-container traffic disabled plus host firewall rules
// (firewall.ts). sshd is published on 127.0.0.1 only. Credentials reach the guest's first boot as a tar
// archive on its stdin — never through env vars or arguments, which `docker inspect` shows.
//
// Network: a VM joins a network namespace on that bridge started ahead of time (network-pool.ts) when
// one is warm, else it joins the bridge itself. Either way the namespace is the VM's alone.

import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import type { ObservedVm, VmBackend, VmHandle, VmSpec } from '../backend.js';
import { vmName } from '../backend.js';
import { USERNAME_RE, PASSWORD_RE } from '../credentials.js';
import { withFloors } from '../floors.js';
import { checkedKeyLine, ed25519KeyLine } from '../ssh-key-line.js';
import { waitForSshBanner } from '../ssh-ready.js';
import { installVmIsolation } from './firewall.js';
import { HOLDER_LABEL, holderName, NetworkPool, ownNamespaceOn, sshEndpointOf, type WarmNetwork } from './network-pool.js';
import { tarArchive } from '../tar.js';

export const LEASE_LABEL = 'net.lease';
const CPUSET_LABEL = 'net.cpuset';
/** On a VM that joined a warm namespace: the holder container's id. */
export const NETNS_LABEL = 'net.netns';

/**
 * Capabilities kept (all others dropped), each one found necessary by removing it and trying again:
 * CHOWN/DAC_OVERRIDE/FOWNER — netvm-init installing the user's files, root acting as root;
 * SETUID/SETGID — sshd switching to the user, sudo, su; SYS_CHROOT — sshd privilege separation;
 * AUDIT_WRITE — sshd allocating a pty; KILL — root signalling the user's processes.
 * NET_BIND_SERVICE is not needed: Docker ≥ 20.10 sets ip_unprivileged_port_start=0 in the guest.
 */
export const VM_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETUID', 'SETGID', 'KILL', 'SYS_CHROOT', 'AUDIT_WRITE'];

export interface DockerBackendOptions {
  /** Full image reference (see images/docker-image.ts `dockerImageRef`). */
  image: string;
  docker?: Docker;
  network?: string;
  /** Host bridge interface name for the VM network (at most 15 characters). */
  bridge?: string;
  pidsLimit?: number;
  readyTimeoutMs?: number;
  /** `auto`: enforce disk_gb where the storage driver supports it; `off`: never. */
  diskLimit?: 'auto' | 'off';
  /** Network namespaces kept started ahead of time, from `check()` on (default 1; 0: none). */
  warmNetworks?: number;
}

interface HostFacts {
  cpus: number;
  diskLimitSupported: boolean;
}

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

export class DockerBackend implements VmBackend {
  readonly name = 'docker';
  private readonly docker: Docker;
  private readonly image: string;
  private readonly network: string;
  private readonly bridge: string;
  private readonly pidsLimit: number;
  private readonly readyTimeoutMs: number;
  private readonly diskLimit: 'auto' | 'off';
  private readonly pool: NetworkPool;
  /** Set by `check()` (node start): only then are namespaces started ahead of time. */
  private warming = false;
  private networkReady: Promise<void> | null = null;
  private hostFacts: Promise<HostFacts> | null = null;
  /** Serializes cpuset choice and container creation so two requests never pick cores blindly. */
  private createChain: Promise<unknown> = Promise.resolve();

  constructor(opts: DockerBackendOptions) {
    this.docker = opts.docker ?? new Docker();
    this.image = opts.image;
    this.network = opts.network ?? 'netnode-vms';
    this.bridge = opts.bridge ?? 'br-netnode';
    this.pidsLimit = opts.pidsLimit ?? 4096;
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
    this.diskLimit = opts.diskLimit ?? 'auto';
    this.pool = new NetworkPool({ docker: this.docker, image: this.image, network: this.network, size: opts.warmNetworks ?? 1 });
  }

  async check(): Promise<void> {
    try {
      await this.docker.ping();
    } catch (err) {
      throw new Error(`docker engine not reachable: ${(err as Error).message}`);
    }
    await this.requireImage();
    await this.ensureNetwork();
    await this.pool.removeOrphans();
    this.warming = true;
    this.pool.fill();
    await this.pool.settled();
  }

  /** Resolves once the warm network namespaces being started are up (benchmarks wait for it). */
  warmed(): Promise<void> {
    return this.pool.settled();
  }

  /** Removes the warm network namespaces nobody claimed (tenant VMs are left alone). */
  async close(): Promise<void> {
    this.warming = false;
    await this.pool.drain();
  }

  async create(spec: VmSpec, signal?: AbortSignal): Promise<VmHandle> {
    const files = provisionFiles(spec);
    await this.ensureNetwork();
    const name = vmName(spec.leaseHash);
    await this.destroy(spec.leaseHash); // a leftover of an earlier attempt for this lease, never another's
    signal?.throwIfAborted();
    const warm = await this.pool.take();
    try {
      // Both settle before any cleanup, so a failure of one never races the other's result.
      const [made, named] = await Promise.allSettled([
        this.serialized(() => this.createContainer(spec, name, warm)),
        warm && this.pool.name(warm, holderName(name)),
      ]);
      if (made.status === 'rejected') throw made.reason;
      if (named.status === 'rejected') throw named.reason;
      const container = made.value;
      // The credentials go through stdin (attached before start, closed after writing): cheaper than
      // an archive upload into a stopped container, and invisible to inspect and logs alike.
      const stdin = (await container.attach({ stream: true, stdin: true, hijack: true })) as Duplex;
      signal?.throwIfAborted();
      await container.start();
      const [ssh] = await Promise.all([
        warm ? warm.ssh : container.inspect().then(sshEndpointOf),
        new Promise<void>((resolve, reject) => {
          stdin.on('error', reject);
          stdin.end(files, () => resolve());
        }).finally(() => stdin.destroy()), // everything is written; the guest sees end-of-file
      ]);
      await waitForSshBanner(ssh, {
        timeoutMs: this.readyTimeoutMs,
        signal,
        alive: () => this.deathReason(container),
      });
      return { backendId: container.id, ssh };
    } catch (err) {
      await Promise.all([this.removeMachine(name), warm && this.pool.discard(warm)]);
      throw err;
    } finally {
      // After the VM is up, so the refill never competes with the start it served.
      if (this.warming) this.pool.fill();
    }
  }

  async destroy(leaseHash: string): Promise<void> {
    const name = vmName(leaseHash);
    await Promise.all([
      this.removeIfLabelled(name, (labels) => labels[LEASE_LABEL] === leaseHash),
      this.removeIfLabelled(holderName(name), (labels) => labels[HOLDER_LABEL] !== undefined),
    ]);
  }

  async list(): Promise<ObservedVm[]> {
    const [vms, holders] = await Promise.all([
      this.docker.listContainers({ all: true, filters: { label: [LEASE_LABEL] } }),
      this.docker.listContainers({ all: true, filters: { label: [HOLDER_LABEL] } }),
    ]);
    const holderById = new Map(holders.map((h) => [h.Id, h]));
    return Promise.all(vms.map(async (c) => {
      const holderId = c.Labels[NETNS_LABEL];
      const holder = holderId === undefined ? c : holderById.get(holderId);
      let running = c.State === 'running' && holder?.State === 'running';
      if (!running && holder && holder !== c && holder.State === 'running') running = await this.restartAfterFailedJoin(c.Id);
      const port = holder?.Ports.find((p) => p.PrivatePort === 22 && p.PublicPort !== undefined && p.IP === '127.0.0.1');
      return {
        leaseHash: c.Labels[LEASE_LABEL]!,
        backendId: c.Id,
        running,
        ssh: port ? { host: '127.0.0.1', port: port.PublicPort } : null,
      };
    }));
  }

  /**
   * After a daemon restart Docker starts containers in no particular order: a VM started before its
   * namespace holder fails to join it and stays stopped (the restart policy does not retry a start
   * error). Such a VM — stopped with a start error, its holder running — is started again here.
   */
  private async restartAfterFailedJoin(id: string): Promise<boolean> {
    const container = this.docker.getContainer(id);
    const info = await container.inspect();
    if (info.State.Running || info.State.Error === '') return info.State.Running;
    try {
      await container.start();
      return true;
    } catch {
      return false;
    }
  }

  private async requireImage(): Promise<void> {
    try {
      await this.docker.getImage(this.image).inspect();
    } catch (err) {
      if (statusCode(err) === 404) throw missingImageError(this.image);
      throw err;
    }
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const next = this.createChain.then(task, task);
    this.createChain = next.catch(() => undefined);
    return next;
  }

  private async createContainer(spec: VmSpec, name: string, warm: WarmNetwork | null): Promise<Docker.Container> {
    const r = withFloors(spec);
    const facts = await this.facts();
    const cpuset = r.vcpus <= facts.cpus ? await this.pickCores(r.vcpus, facts.cpus) : null;
    const memoryBytes = r.memoryMb * 1024 * 1024;
    const labels: Record<string, string> = { [LEASE_LABEL]: spec.leaseHash };
    if (cpuset) labels[CPUSET_LABEL] = cpuset;
    if (warm) labels[NETNS_LABEL] = warm.id;
    // In a warm namespace the holder has the port, the IPv6 setting and the host name.
    const network = warm ? { NetworkMode: `container:${warm.id}` } : ownNamespaceOn(this.network);
    try {
      return await this.docker.createContainer({
        name,
        Image: this.image,
        ...(warm ? {} : { Hostname: name, ExposedPorts: { '22/tcp': {} } }),
        Labels: labels,
        Env: ['NETVM_PROVISION=stdin'],
        AttachStdin: true,
        OpenStdin: true,
        StdinOnce: true,
        HostConfig: {
          ...network,
          Memory: memoryBytes,
          MemorySwap: memoryBytes,
          // Docker refuses NanoCpus above the host's count; a raw quota records the lease's number.
          ...(cpuset ? { CpusetCpus: cpuset } : { CpuPeriod: 100_000, CpuQuota: r.vcpus * 100_000 }),
          ...(facts.diskLimitSupported ? { StorageOpt: { size: `${r.diskGb}G` } } : {}),
          PidsLimit: this.pidsLimit,
          Privileged: false,
          CapDrop: ['ALL'],
          CapAdd: VM_CAPABILITIES,
          Init: true,
          RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
          LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
        },
      });
    } catch (err) {
      if (statusCode(err) === 404) throw missingImageError(this.image);
      throw err;
    }
  }

  /** The `count` cores carrying the fewest other VMs' cpusets (lowest index on ties). */
  private async pickCores(count: number, hostCpus: number): Promise<string> {
    const load = new Array<number>(hostCpus).fill(0);
    const containers = await this.docker.listContainers({ all: true, filters: { label: [LEASE_LABEL] } });
    for (const c of containers) {
      for (const core of (c.Labels[CPUSET_LABEL] ?? '').split(',')) {
        const i = Number(core);
        if (core !== '' && i < hostCpus) load[i]! += 1;
      }
    }
    const cores = load.map((n, i) => ({ n, i })).sort((a, b) => a.n - b.n || a.i - b.i).slice(0, count);
    return cores.map((c) => c.i).sort((a, b) => a - b).join(',');
  }

  private facts(): Promise<HostFacts> {
    this.hostFacts ??= this.docker.info().then((info: { NCPU: number; Driver: string; DriverStatus?: [string, string][] }) => {
      const backing = info.DriverStatus?.find(([k]) => k === 'Backing Filesystem')?.[1];
      const supported = ['btrfs', 'zfs', 'devicemapper'].includes(info.Driver) ||
        (info.Driver === 'overlay2' && backing === 'xfs');
      return { cpus: info.NCPU, diskLimitSupported: this.diskLimit === 'auto' && supported };
    });
    return this.hostFacts;
  }

  private ensureNetwork(): Promise<void> {
    this.networkReady ??= this.setUpNetwork().catch((err) => {
      this.networkReady = null;
      throw err;
    });
    return this.networkReady;
  }

  private async setUpNetwork(): Promise<void> {
    let info: { Options?: Record<string, string> };
    try {
      info = await this.docker.getNetwork(this.network).inspect();
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
      await this.docker.createNetwork({
        Name: this.network,
        Driver: 'bridge',
        CheckDuplicate: true,
        Labels: { 'net.managed-by': 'netnode' },
        Options: {
          'com.docker.network.bridge.enable_icc': 'false',
          'com.docker.network.bridge.name': this.bridge,
        },
      });
      info = await this.docker.getNetwork(this.network).inspect();
    }
    const options = info.Options ?? {};
    if (options['com.docker.network.bridge.enable_icc'] !== 'false') {
      throw new Error(`docker network ${this.network} allows inter-container traffic: remove it so netnode recreates it`);
    }
    await installVmIsolation(options['com.docker.network.bridge.name'] ?? this.bridge);
  }

  /** Null while the container runs; otherwise why it stopped (exit code and the last log line). */
  private async deathReason(container: Docker.Container): Promise<string | null> {
    const info = await container.inspect();
    // With the restart policy a crashing init shows as running-and-restarting, never as exited.
    if (info.State.Running && !info.State.Restarting && info.RestartCount === 0) return null;
    const logs = demuxLogs(await container.logs({ stdout: true, stderr: true, tail: 5 }));
    const last = logs.split('\n').map((l) => l.trim()).filter(Boolean).pop() ?? '';
    return `vm container exited with code ${info.State.ExitCode}${last ? `: ${last}` : ''}`;
  }

  /** The VM container and its namespace holder, whichever exist. */
  private async removeMachine(name: string): Promise<void> {
    await Promise.all([this.removeContainer(name), this.removeContainer(holderName(name))]);
  }

  /** Removes container `name` if it exists and its labels pass `owned` (never another's container). */
  private async removeIfLabelled(name: string, owned: (labels: Record<string, string>) => boolean): Promise<void> {
    try {
      const info = await this.docker.getContainer(name).inspect();
      if (!owned(info.Config.Labels ?? {})) return;
    } catch (err) {
      if (statusCode(err) === 404) return;
      throw err;
    }
    await this.removeContainer(name);
  }

  private async removeContainer(name: string): Promise<void> {
    try {
      await this.docker.getContainer(name).remove({ force: true, v: true });
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
  }
}

/** Docker's non-TTY log stream: frames of [stream, 0, 0, 0, u32be size] + payload. */
function demuxLogs(raw: Buffer): string {
  const parts: Buffer[] = [];
  for (let at = 0; at + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(at + 4);
    parts.push(raw.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}

function missingImageError(image: string): Error {
  return new Error(`vm image ${image} is missing: build it with "netnode image build --backend docker"`);
}

/** The files netvm-init installs on first start; everything validated here, before it leaves the host. */
function provisionFiles(spec: VmSpec): Buffer {
  if (!USERNAME_RE.test(spec.username)) throw new Error('generated username is malformed');
  if (!PASSWORD_RE.test(spec.password)) throw new Error('generated password is malformed');
  const accessLine = checkedKeyLine(ed25519KeyLine(spec.accessPubKey), 'access key line');
  const gatewayLine = checkedKeyLine(spec.gatewayAuthorizedKey, 'gateway key line');
  const dir = 'etc/netvm/provision';
  return tarArchive([
    { path: 'etc/netvm', mode: 0o755 },
    { path: dir, mode: 0o700 },
    { path: `${dir}/username`, mode: 0o600, content: `${spec.username}\n` },
    { path: `${dir}/chpasswd`, mode: 0o600, content: `${spec.username}:${spec.password}\n` },
    { path: `${dir}/user_authorized_keys`, mode: 0o600, content: `${accessLine}\n` },
    { path: `${dir}/root_authorized_keys`, mode: 0o600, content: `${accessLine}\n${gatewayLine}\n` },
  ]);
}
