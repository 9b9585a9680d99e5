// libvirt backend (provider.md §5.1): one QEMU domain `netvm-<12 hex>` per lease.
//
// Machine: direct kernel boot of the base image's kernel (images/libvirt-image.ts); root disk is a
// qcow2 overlay on the base image sized to disk_gb (the guest grows its filesystem at boot, so the
// disk limit is the virtual disk's size); vcpus and memory as the lease asks, with the floors of §5.1.
// The domain type (`qemu` = software emulation, `kvm`) is a setting.
//
// Credentials: a seed disk — a read-only raw virtio disk holding a tar archive (serial `netvm-seed`)
// with the guest's address, the generated user, its `user:password` line and both authorized_keys
// files. The guest's PID-1 script applies it (credentials once, network every boot). Nothing secret
// goes through the kernel command line or the domain XML; the seed file is root-only on the host.
//
// Network: a NAT network per VM on its own bridge with a /30 from an address pool (network.ts); the
// host reaches the guest's sshd at the guest's bridge address, port 22, which only the host can route
// to. Host firewall rules (firewall.ts) keep guests away from the host's services and each other.
//
// Files per VM live in `<stateDir>/netvm-<12 hex>/` (overlay, seed, console log); `destroy` removes
// the domain, its network and that directory.

import { access, constants, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DomainState, Hypervisor, type Domain } from '@unraid/libvirt';
import type { Logger } from 'pino';
import type { ObservedVm, SshEndpoint, VmBackend, VmHandle, VmSpec } from '../backend.js';
import { vmName } from '../backend.js';
import { PASSWORD_RE, USERNAME_RE } from '../credentials.js';
import { withFloors } from '../floors.js';
import { checkedKeyLine, ed25519KeyLine } from '../ssh-key-line.js';
import { waitForSshBanner } from '../ssh-ready.js';
import { tarArchive } from '../tar.js';
import { libvirtImagePresent, type LibvirtImage } from '../images/libvirt-image.js';
import { domainXml, readDomainFacts, type DomainType } from './domain-xml.js';
import { installLibvirtIsolation } from './firewall.js';
import { createGuestNetwork, DEFAULT_ADDRESS_POOL, parsePool, removeGuestNetwork, type AddressPool } from './network.js';
import { isNotFound, qemuImg } from './virsh.js';

export const DEFAULT_LIBVIRT_URI = 'qemu:///system';
export const DEFAULT_LIBVIRT_STATE_DIR = '/var/lib/netnode/libvirt';

export interface LibvirtBackendOptions {
  image: LibvirtImage;
  /** `kvm` in production; `qemu` (software emulation) where /dev/kvm is unusable. */
  domainType: DomainType;
  uri?: string;
  /** Per-VM overlays, seeds and console logs. */
  stateDir?: string;
  /** IPv4 CIDR carved into one /30 per VM. */
  addressPool?: string;
  /** Boot deadline: software-emulated guests take seconds to tens of seconds. */
  readyTimeoutMs?: number;
  /** Install the host firewall rules for the VM bridges (default true). */
  isolation?: boolean;
  logger?: Logger;
}

const LEASE_HASH_RE = /^[0-9a-f]{64}$/;

export class LibvirtBackend implements VmBackend {
  readonly name = 'libvirt';
  private readonly uri: string;
  private readonly stateDir: string;
  private readonly pool: AddressPool;
  private readonly readyTimeoutMs: number;
  private hypervisor: Promise<Hypervisor> | null = null;
  private isolation: Promise<void> | null = null;
  /** Serializes address allocation: two concurrent creates could otherwise pick the same /30. */
  private networkQueue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LibvirtBackendOptions) {
    this.uri = opts.uri ?? DEFAULT_LIBVIRT_URI;
    this.stateDir = opts.stateDir ?? DEFAULT_LIBVIRT_STATE_DIR;
    this.pool = parsePool(opts.addressPool ?? DEFAULT_ADDRESS_POOL);
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 180_000;
  }

  async check(): Promise<void> {
    try {
      await this.connection();
    } catch (err) {
      throw new Error(`libvirt: cannot connect to ${this.uri} (${(err as Error).message}); is libvirtd running?`);
    }
    if (!libvirtImagePresent(this.opts.image)) {
      throw new Error(
        `libvirt: base image ${this.opts.image.id} is missing (${this.opts.image.qcow2}); ` +
          'build it with `netnode image build --backend libvirt`',
      );
    }
    await qemuImg(['--version']).catch((err: Error) => {
      throw new Error(`libvirt: qemu-img is not usable: ${err.message}`);
    });
    if (this.opts.domainType === 'kvm') {
      await access('/dev/kvm', constants.R_OK | constants.W_OK).catch(() => {
        throw new Error('libvirt: domain type kvm needs a usable /dev/kvm; use domain type qemu without it');
      });
    }
  }

  async create(spec: VmSpec, signal?: AbortSignal): Promise<VmHandle> {
    if (!LEASE_HASH_RE.test(spec.leaseHash)) throw new Error('libvirt: lease hash must be 64 lowercase hex');
    if (!USERNAME_RE.test(spec.username)) throw new Error('libvirt: invalid generated user name');
    if (!PASSWORD_RE.test(spec.password)) throw new Error('libvirt: invalid generated password');
    const accessLine = ed25519KeyLine(spec.accessPubKey);
    const gatewayLine = checkedKeyLine(spec.gatewayAuthorizedKey, 'gateway key');
    const r = withFloors(spec);
    for (const [what, v] of Object.entries(r)) {
      if (!Number.isSafeInteger(v)) throw new Error(`libvirt: ${what} must be an integer`);
    }

    const name = vmName(spec.leaseHash);
    const dir = join(this.stateDir, name);
    const files = { overlay: join(dir, 'disk.qcow2'), seed: join(dir, 'seed.tar'), console: join(dir, 'console.log') };
    const log = this.opts.logger?.child({ vm: name });
    // A fresh machine: leftovers of an earlier, interrupted attempt go first.
    await this.destroy(spec.leaseHash);
    try {
      await this.ensureIsolation();
      signal?.throwIfAborted();
      await mkdir(dir, { recursive: true, mode: 0o711 });
      await qemuImg(['create', '-q', '-f', 'qcow2', '-F', 'qcow2', '-b', this.opts.image.qcow2, files.overlay, `${r.diskGb}G`]);
      const net = await this.serialized(() =>
        createGuestNetwork(this.uri, this.pool, parseInt(spec.leaseHash.slice(0, 8), 16) % this.pool.slots, name,
          `nv-${spec.leaseHash.slice(0, 12)}`),
      );
      const ssh: SshEndpoint = { host: net.guest, port: 22 };
      await writeFile(files.seed, tarArchive([
        { path: 'network', mode: 0o600, content: `ADDRESS=${net.guest}/${net.prefix}\nGATEWAY=${net.gateway}\nHOSTNAME=${name}\n` },
        { path: 'username', mode: 0o600, content: `${spec.username}\n` },
        { path: 'chpasswd', mode: 0o600, content: `${spec.username}:${spec.password}\n` },
        { path: 'root_authorized_keys', mode: 0o600, content: `${accessLine}\n${gatewayLine}\n` },
        { path: 'user_authorized_keys', mode: 0o600, content: `${accessLine}\n` },
      ]), { mode: 0o600 });
      signal?.throwIfAborted();

      const hv = await this.connection();
      const domain = await hv.domainDefineXML(domainXml({
        type: this.opts.domainType,
        name,
        leaseHash: spec.leaseHash,
        vcpus: r.vcpus,
        memoryMb: r.memoryMb,
        kernel: this.opts.image.kernel,
        initrd: this.opts.image.initrd,
        overlay: files.overlay,
        seed: files.seed,
        consoleLog: files.console,
        network: net.name,
        ssh,
      }));
      await domain.create();
      log?.info({ ssh: `${ssh.host}:${ssh.port}`, ...r }, 'libvirt domain started');
      await waitForSshBanner(ssh, {
        timeoutMs: this.readyTimeoutMs,
        intervalMs: 250,
        ...(signal ? { signal } : {}),
        alive: async () => ((await domain.getInfo()).state === DomainState.RUNNING ? null : 'guest stopped while booting'),
      });
      return { backendId: name, ssh };
    } catch (err) {
      const consoleText = await consoleTail(files.console);
      await this.destroy(spec.leaseHash).catch((cleanupErr: Error) =>
        log?.error({ err: cleanupErr.message }, 'libvirt cleanup after a failed create failed'),
      );
      throw new Error(`libvirt: ${name}: ${(err as Error).message}${consoleText ? `\nguest console:\n${consoleText}` : ''}`);
    }
  }

  async destroy(leaseHash: string): Promise<void> {
    const name = vmName(leaseHash);
    const domain = await this.lookup(name);
    if (domain) {
      if ((await domain.getInfo()).state !== DomainState.SHUTOFF) {
        await domain.destroy().catch((err: Error) => {
          if (!/not running/i.test(err.message) && !isNotFound(err)) throw err;
        });
      }
      await domain.undefine().catch((err: Error) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await removeGuestNetwork(this.uri, name);
    await rm(join(this.stateDir, name), { recursive: true, force: true });
  }

  async list(): Promise<ObservedVm[]> {
    const hv = await this.connection();
    const observed: ObservedVm[] = [];
    const domains = await hv.connectListAllDomains().catch((err: Error) => {
      this.forgetBrokenConnection(err);
      throw err;
    });
    for (const domain of domains) {
      const backendId = await domain.getName();
      if (!backendId.startsWith('netvm-')) continue;
      const facts = readDomainFacts(await domain.getXMLDesc());
      if (!facts || vmName(facts.leaseHash) !== backendId) continue;
      const running = (await domain.getInfo()).state === DomainState.RUNNING;
      observed.push({ leaseHash: facts.leaseHash, backendId, running, ssh: facts.ssh });
    }
    return observed;
  }

  /** Closes the libvirt connection (the backend reconnects on next use). */
  async close(): Promise<void> {
    const hv = this.hypervisor;
    this.hypervisor = null;
    if (hv) await (await hv.catch(() => null))?.connectClose().catch(() => undefined);
  }

  private connection(): Promise<Hypervisor> {
    if (!this.hypervisor) {
      const hv = new Hypervisor({ uri: this.uri });
      this.hypervisor = hv.connectOpen().then(() => hv);
      this.hypervisor.catch(() => (this.hypervisor = null));
    }
    return this.hypervisor;
  }

  private async lookup(name: string): Promise<Domain | null> {
    const hv = await this.connection();
    try {
      return await hv.domainLookupByName(name);
    } catch (err) {
      if (isNotFound(err)) return null;
      this.forgetBrokenConnection(err);
      throw err;
    }
  }

  /** After libvirtd restarts, the open connection is dead: reconnect on the next call. */
  private forgetBrokenConnection(err: unknown): void {
    if (/socket|connection|closed/i.test((err as Error).message ?? '')) this.hypervisor = null;
  }

  private ensureIsolation(): Promise<void> {
    if (this.opts.isolation === false) return Promise.resolve();
    if (!this.isolation) {
      this.isolation = installLibvirtIsolation();
      this.isolation.catch(() => (this.isolation = null));
    }
    return this.isolation;
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const result = this.networkQueue.then(task);
    this.networkQueue = result.catch(() => undefined);
    return result;
  }
}

async function consoleTail(path: string): Promise<string> {
  try {
    const lines = (await readFile(path, 'utf8')).replace(/\r/g, '').split('\n').filter((l) => l.trim() !== '');
    return lines.slice(-15).join('\n');
  } catch {
    return '';
  }
}

