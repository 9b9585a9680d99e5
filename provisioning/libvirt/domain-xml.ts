// The libvirt domain of one VM: direct kernel boot of the base image's kernel with a copy-on-write
// overlay as root disk, the seed as a read-only second disk, and the VM's own NAT network.
// The full lease hash and the guest's SSH endpoint are kept in the domain's metadata, so `list()`
// can adopt machines after a restart from libvirt alone; the description repeats the lease hash
// for operators (`virsh desc`).

import type { SshEndpoint } from '../backend.js';

export type DomainType = 'qemu' | 'kvm';

export const METADATA_NS = 'urn:netnode:libvirt-vm:1';
export const SEED_SERIAL = 'netvm-seed';

/** `panic=5`: if PID 1 ever exits the guest reboots and runs its init again instead of hanging. */
const KERNEL_CMDLINE = 'root=LABEL=netvm-root rw console=ttyS0 init=/sbin/netvm-init net.ifnames=0 panic=5 quiet';

export interface DomainPlan {
  type: DomainType;
  name: string;
  leaseHash: string;
  vcpus: number;
  memoryMb: number;
  kernel: string;
  initrd: string;
  overlay: string;
  seed: string;
  consoleLog: string;
  network: string;
  ssh: SshEndpoint;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&apos;')
    .replace(/"/g, '&quot;');
}

export function domainXml(p: DomainPlan): string {
  // TCG emulates its default CPU model; under KVM the guest sees the host's CPU.
  const cpu = p.type === 'kvm' ? "\n  <cpu mode='host-passthrough'/>" : '';
  return `<domain type='${p.type}'>
  <name>${esc(p.name)}</name>
  <description>netnode lease ${esc(p.leaseHash)}</description>
  <metadata>
    <netnode:vm xmlns:netnode='${METADATA_NS}' lease='${esc(p.leaseHash)}' ssh-host='${esc(p.ssh.host)}' ssh-port='${p.ssh.port}'/>
  </metadata>
  <memory unit='MiB'>${p.memoryMb}</memory>
  <vcpu placement='static'>${p.vcpus}</vcpu>${cpu}
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>${esc(p.kernel)}</kernel>
    <initrd>${esc(p.initrd)}</initrd>
    <cmdline>${KERNEL_CMDLINE}</cmdline>
  </os>
  <features><acpi/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' discard='unmap'/>
      <source file='${esc(p.overlay)}'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw'/>
      <source file='${esc(p.seed)}'/>
      <target dev='vdb' bus='virtio'/>
      <serial>${SEED_SERIAL}</serial>
      <readonly/>
    </disk>
    <interface type='network'>
      <source network='${esc(p.network)}'/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'>
      <log file='${esc(p.consoleLog)}' append='off'/>
      <target port='0'/>
    </serial>
    <console type='pty'>
      <target type='serial' port='0'/>
    </console>
    <rng model='virtio'>
      <backend model='random'>/dev/urandom</backend>
    </rng>
    <memballoon model='none'/>
  </devices>
</domain>
`;
}

export interface DomainFacts {
  leaseHash: string;
  ssh: SshEndpoint | null;
}

/** Reads back what `domainXml` stored; null for a domain that is not one of ours. */
export function readDomainFacts(xml: string): DomainFacts | null {
  const tag = /<netnode:vm\b[^>]*>/.exec(xml)?.[0] ?? '';
  const attr = (name: string): string | undefined => new RegExp(`\\b${name}=['"]([^'"]*)['"]`).exec(tag)?.[1];
  const leaseHash = attr('lease') ?? /<description>netnode lease ([0-9a-f]{64})<\/description>/.exec(xml)?.[1];
  if (!leaseHash || !/^[0-9a-f]{64}$/.test(leaseHash)) return null;
  const host = attr('ssh-host');
  const port = Number(attr('ssh-port'));
  return { leaseHash, ssh: host && Number.isInteger(port) && port > 0 ? { host, port } : null };
}
