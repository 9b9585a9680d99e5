// Pure parts of the libvirt backend: domain XML and its read-back, the /30 address plan, the
// image's content-hash naming. The real domain is exercised in test/integration/libvirt-backend.test.ts.

import { describe, expect, it } from 'vitest';
import { libvirtImage } from '../../provisioning/images/libvirt-image.js';
import { domainXml, readDomainFacts, type DomainPlan } from '../../provisioning/libvirt/domain-xml.js';
import { parsePool, slotNetwork } from '../../provisioning/libvirt/network.js';

const LEASE = '3c31e7ba762b' + 'ab'.repeat(26);

const plan: DomainPlan = {
  type: 'qemu', name: 'netvm-3c31e7ba762b', leaseHash: LEASE, vcpus: 2, memoryMb: 768,
  kernel: '/img/k', initrd: '/img/i', overlay: '/s/disk.qcow2', seed: '/s/seed.tar', consoleLog: '/s/console.log',
  network: 'netvm-3c31e7ba762b', ssh: { host: '10.213.0.2', port: 22 },
};

describe('domain XML', () => {
  it('carries the resources, the domain type and the lease, and reads back lease and endpoint', () => {
    const xml = domainXml(plan);
    expect(xml).toContain("<domain type='qemu'>");
    expect(xml).toContain("<memory unit='MiB'>768</memory>");
    expect(xml).toContain("<vcpu placement='static'>2</vcpu>");
    expect(xml).toContain(`<description>netnode lease ${LEASE}</description>`);
    expect(xml).not.toContain('host-passthrough');
    expect(readDomainFacts(xml)).toEqual({ leaseHash: LEASE, ssh: { host: '10.213.0.2', port: 22 } });
  });

  it('differs for kvm only in the type and the CPU model', () => {
    const xml = domainXml({ ...plan, type: 'kvm' });
    expect(xml).toContain("<domain type='kvm'>");
    expect(xml).toContain("<cpu mode='host-passthrough'/>");
  });

  it('reads libvirt’s re-serialized metadata (double quotes) and ignores foreign domains', () => {
    const fromLibvirt = `<domain type='qemu'><metadata>
      <netnode:vm xmlns:netnode="urn:netnode:libvirt-vm:1" lease="${LEASE}" ssh-host="10.213.0.6" ssh-port="22"/>
    </metadata></domain>`;
    expect(readDomainFacts(fromLibvirt)).toEqual({ leaseHash: LEASE, ssh: { host: '10.213.0.6', port: 22 } });
    expect(readDomainFacts("<domain type='kvm'><name>netvm-other</name></domain>")).toBeNull();
  });

  it('escapes paths', () => {
    expect(domainXml({ ...plan, overlay: "/s/a'b&c.qcow2" })).toContain("<source file='/s/a&apos;b&amp;c.qcow2'/>");
  });
});

describe('address plan', () => {
  it('gives each slot its own /30: gateway .1, guest .2', () => {
    const pool = parsePool('10.213.0.0/16');
    expect(pool.slots).toBe(16384);
    expect(slotNetwork(pool, 0, 'n', 'b')).toMatchObject({ gateway: '10.213.0.1', guest: '10.213.0.2', prefix: 30 });
    expect(slotNetwork(pool, 16383, 'n', 'b')).toMatchObject({ gateway: '10.213.255.253', guest: '10.213.255.254' });
  });

  it('rejects pools that are not aligned CIDRs', () => {
    expect(() => parsePool('10.213.0.1/16')).toThrow(/not aligned/);
    expect(() => parsePool('10.213.0.0')).toThrow(/CIDR/);
    expect(() => parsePool('10.213.0.0/31')).toThrow(/CIDR/);
  });
});

describe('image naming', () => {
  it('is a content hash of the recipe: stable, and different for a different recipe', () => {
    const a = libvirtImage({ dir: '/images' });
    expect(a.id).toMatch(/^netvm-[0-9a-f]{16}$/);
    expect(libvirtImage({ dir: '/images' })).toEqual(a);
    expect(a.qcow2).toBe(`/images/${a.id}.qcow2`);
    expect(libvirtImage({ dir: '/images', suite: 'trixie' }).id).not.toBe(a.id);
    expect(libvirtImage({ dir: '/elsewhere' }).id).toBe(a.id);
  });
});
