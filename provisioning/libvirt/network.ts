// One libvirt NAT network per VM: a /30 carved from an address pool (host = .1, guest = .2), its own
// bridge `nv-<12 hex>`, no DHCP (the guest's address travels in its seed). A network per VM keeps
// tenants apart at layer 2, and libvirt's own forward rules refuse new connections between networks;
// the host reaches the guest's port 22 at its address on the bridge, which nothing outside the host
// can route to.

import { isNotFound, virsh, virshWithXml } from './virsh.js';

export interface GuestNetwork {
  /** libvirt network name (same as the domain's: `netvm-<12 hex>`). */
  name: string;
  bridge: string;
  gateway: string;
  guest: string;
  prefix: 30;
}

export const DEFAULT_ADDRESS_POOL = '10.213.0.0/16';

function ipToInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`invalid IPv4 address: ${ip}`);
  }
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export interface AddressPool {
  base: number;
  slots: number;
}

export function parsePool(cidr: string): AddressPool {
  const match = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr);
  const prefix = match ? Number(match[2]) : NaN;
  if (!match || prefix < 8 || prefix > 30) throw new Error(`address pool must be an IPv4 CIDR from /8 to /30: ${cidr}`);
  const size = 2 ** (32 - prefix);
  const base = ipToInt(match[1]!);
  if (base % size !== 0) throw new Error(`address pool ${cidr} is not aligned to its prefix`);
  return { base, slots: size / 4 };
}

export function slotNetwork(pool: AddressPool, slot: number, name: string, bridge: string): GuestNetwork {
  const net = pool.base + slot * 4;
  return { name, bridge, gateway: intToIp(net + 1), guest: intToIp(net + 2), prefix: 30 };
}

function networkXml(net: GuestNetwork): string {
  return `<network>
  <name>${net.name}</name>
  <forward mode='nat'/>
  <bridge name='${net.bridge}' stp='off' delay='0'/>
  <ip address='${net.gateway}' netmask='255.255.255.252'/>
</network>
`;
}

/** Gateway addresses of every `netvm-*` network libvirt knows (running or not). */
async function usedGateways(uri: string): Promise<Set<string>> {
  const names = (await virsh(uri, ['net-list', '--all', '--name'])).split('\n').map((s) => s.trim())
    .filter((s) => s.startsWith('netvm-'));
  const used = new Set<string>();
  for (const name of names) {
    try {
      const xml = await virsh(uri, ['net-dumpxml', name]);
      const ip = /<ip address=['"]([\d.]+)['"]/.exec(xml)?.[1];
      if (ip) used.add(ip);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return used;
}

/**
 * Defines and starts the VM's network on the first free /30 at or after `preferredSlot`. Callers
 * serialize calls (two concurrent allocations could pick the same slot).
 */
export async function createGuestNetwork(
  uri: string,
  pool: AddressPool,
  preferredSlot: number,
  name: string,
  bridge: string,
): Promise<GuestNetwork> {
  const used = await usedGateways(uri);
  for (let i = 0; i < pool.slots; i++) {
    const net = slotNetwork(pool, (preferredSlot + i) % pool.slots, name, bridge);
    if (used.has(net.gateway)) continue;
    return defineAndStart(uri, net);
  }
  throw new Error(`no free /30 left in the VM address pool`);
}

async function defineAndStart(uri: string, net: GuestNetwork): Promise<GuestNetwork> {
  await virshWithXml(uri, 'net-define', networkXml(net));
  try {
    await virsh(uri, ['net-start', net.name]);
    await virsh(uri, ['net-autostart', net.name]);
  } catch (err) {
    await removeGuestNetwork(uri, net.name);
    throw err;
  }
  return net;
}

/** Stops and undefines the network; absent networks are fine. */
export async function removeGuestNetwork(uri: string, name: string): Promise<void> {
  for (const args of [['net-destroy', name], ['net-undefine', name]]) {
    try {
      await virsh(uri, args);
    } catch (err) {
      if (!isNotFound(err) && !/not active/i.test((err as Error).message)) throw err;
    }
  }
}
