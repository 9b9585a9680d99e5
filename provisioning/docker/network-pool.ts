// Warm network namespaces for Docker VMs.
//
// Why: on a user-defined bridge, Docker spends ~100 ms or more of every container start attaching it
// (endpoint, port forward, and its embedded DNS, whose iptables rules it sets up by re-executing dockerd
// inside the namespace — unconditionally on such networks). None of that depends on the lease. A
// *holder* is a minimal container that owns one network namespace on the VM bridge, with the SSH
// port published on 127.0.0.1; a VM joins it (`NetworkMode: container:<holder>`) and so starts
// without that work. Each VM still gets a namespace of its own on the isolated bridge: a holder
// serves exactly one VM, is renamed after it when taken (`netvm-<lease>-net`) and removed with it.
//
// Holders are taken only by the process that started them (from memory: a rename is no atomic claim
// between processes); free holders whose owner process is gone are removed by `removeOrphans`.

import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import type { SshEndpoint } from '../backend.js';

/** On holders; the value is the pid of the process that may take it while it is still free. */
export const HOLDER_LABEL = 'net.netns-holder';
/** Free holders are named with this prefix; taken ones after their VM. */
const FREE_PREFIX = 'netvm-pool-';

export interface WarmNetwork {
  id: string;
  ssh: SshEndpoint;
}

export interface NetworkPoolOptions {
  docker: Docker;
  image: string;
  network: string;
  /** How many holders to keep started ahead of time. */
  size: number;
}

/**
 * HostConfig of a container that owns its network namespace on the VM bridge (a holder, or a VM
 * started without one): sshd published on 127.0.0.1 only, IPv6 off. A VM that joins a holder
 * cannot set these itself; the holder's are its own.
 */
export function ownNamespaceOn(network: string) {
  return {
    NetworkMode: network,
    PortBindings: { '22/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
    Sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' },
  };
}

/** The holder of a VM, by the VM's container name. */
export function holderName(vmContainerName: string): string {
  return `${vmContainerName}-net`;
}

export function sshEndpointOf(info: Docker.ContainerInspectInfo): SshEndpoint {
  const binding = info.NetworkSettings.Ports['22/tcp']?.find((b) => b.HostIp === '127.0.0.1');
  if (!binding) throw new Error('docker published no 127.0.0.1 port for the guest ssh server');
  return { host: '127.0.0.1', port: Number(binding.HostPort) };
}

export class NetworkPool {
  private readonly docker: Docker;
  private readonly image: string;
  private readonly network: string;
  private readonly size: number;
  /** Holders started (or starting) and not yet taken; null when starting one failed. */
  private warm: Promise<WarmNetwork | null>[] = [];

  constructor(opts: NetworkPoolOptions) {
    this.docker = opts.docker;
    this.image = opts.image;
    this.network = opts.network;
    this.size = opts.size;
  }

  /** Starts holders until `size` are warm or warming. */
  fill(): void {
    while (this.warm.length < this.size) this.warm.push(this.startHolder().catch(() => null));
  }

  /** Resolves once every holder being started has settled. */
  async settled(): Promise<void> {
    await Promise.all(this.warm);
  }

  /**
   * Takes a warm holder out of the pool; null when none is warm (the VM then joins the bridge itself).
   * The caller names it after its VM (`name`), and removes it by that name or by id on failure.
   */
  async take(): Promise<WarmNetwork | null> {
    for (let next = this.warm.shift(); next; next = this.warm.shift()) {
      const holder = await next;
      if (holder) return holder;
    }
    return null;
  }

  /** Renames a taken holder after its VM, so `destroy` finds it by the lease alone. */
  async name(holder: WarmNetwork, name: string): Promise<void> {
    await this.docker.getContainer(holder.id).rename({ name });
  }

  /** Removes a taken holder by id (its VM could not be made). */
  async discard(holder: WarmNetwork): Promise<void> {
    await this.remove(holder.id);
  }

  /** Removes this process's free holders (at shutdown). */
  async drain(): Promise<void> {
    const warm = this.warm;
    this.warm = [];
    await Promise.all(warm.map(async (w) => {
      const holder = await w;
      if (holder) await this.remove(holder.id);
    }));
  }

  /** Removes free holders whose owner process no longer runs. */
  async removeOrphans(): Promise<void> {
    const holders = await this.docker.listContainers({ all: true, filters: { label: [HOLDER_LABEL] } });
    await Promise.all(holders
      .filter((c) => c.Names.some((n) => n.startsWith(`/${FREE_PREFIX}`)) && !processAlive(Number(c.Labels[HOLDER_LABEL])))
      .map((c) => this.remove(c.Id)));
  }

  private async startHolder(): Promise<WarmNetwork> {
    const container = await this.docker.createContainer({
      name: `${FREE_PREFIX}${randomBytes(6).toString('hex')}`,
      Image: this.image,
      Labels: { [HOLDER_LABEL]: String(process.pid) },
      Entrypoint: ['sleep', 'infinity'],
      User: '65534:65534',
      ExposedPorts: { '22/tcp': {} },
      HostConfig: {
        ...ownNamespaceOn(this.network),
        Privileged: false,
        CapDrop: ['ALL'],
        ReadonlyRootfs: true,
        Memory: 16 * 1024 * 1024,
        MemorySwap: 16 * 1024 * 1024,
        PidsLimit: 8,
        Init: true,
        RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
        LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
      },
    });
    try {
      await container.start();
      return { id: container.id, ssh: sshEndpointOf(await container.inspect()) };
    } catch (err) {
      await this.remove(container.id);
      throw err;
    }
  }

  private async remove(id: string): Promise<void> {
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch {
      // already gone
    }
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
