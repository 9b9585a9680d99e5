// Host firewall for the VM bridges `nv-*` (provider.md §5.1: no connection from a VM to the host's
// own services or to another tenant's machine). libvirt's NAT rules already refuse new connections
// into a VM network from outside it; these rules add what libvirt allows:
//   INPUT   -i nv-+: replies to connections the host opened (SSH readiness, the gateway) and DNS to
//                    the network's own dnsmasq pass; everything else to the host is dropped;
//   FORWARD -i nv-+ -o nv-+: dropped (VM to VM, whatever libvirt's chains say).
// IPv6: the guests have only link-local addresses, but those reach the host too; same INPUT rule.
// Idempotent: a chain is rewritten only when its rules differ, a jump inserted only when missing.

import { spawn } from 'node:child_process';

export const INPUT_CHAIN = 'NETNODE-LIBVIRT-INPUT';
export const FORWARD_CHAIN = 'NETNODE-LIBVIRT-FORWARD';
export const BRIDGE_MATCH = 'nv-+';

interface Chain {
  name: string;
  rules: string[][];
  parent: 'INPUT' | 'FORWARD';
}

// Written as `iptables -S` prints them, so an unchanged chain compares equal.
const INPUT_RULES = [
  ['-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT'],
  ['-p', 'udp', '-m', 'udp', '--dport', '53', '-j', 'ACCEPT'],
  ['-p', 'tcp', '-m', 'tcp', '--dport', '53', '-j', 'ACCEPT'],
  ['-j', 'DROP'],
];

const CHAINS: Record<'iptables' | 'ip6tables', Chain[]> = {
  iptables: [
    { name: INPUT_CHAIN, rules: INPUT_RULES, parent: 'INPUT' },
    { name: FORWARD_CHAIN, rules: [['-o', BRIDGE_MATCH, '-j', 'DROP']], parent: 'FORWARD' },
  ],
  ip6tables: [{ name: INPUT_CHAIN, rules: INPUT_RULES, parent: 'INPUT' }],
};

function iptables(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['-w', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${binary} ${args.join(' ')}: ${err.trim()}`))));
  });
}

const succeeds = (binary: string, args: string[]) => iptables(binary, args).then(() => true, () => false);

async function apply(binary: string, chain: Chain): Promise<void> {
  if (!(await succeeds(binary, ['-S', chain.name]))) await iptables(binary, ['-N', chain.name]);
  const wanted = chain.rules.map((r) => `-A ${chain.name} ${r.join(' ')}`);
  const current = (await iptables(binary, ['-S', chain.name])).split('\n').filter((l) => l.startsWith('-A '));
  if (current.join('\n') !== wanted.join('\n')) {
    await iptables(binary, ['-F', chain.name]);
    for (const rule of chain.rules) await iptables(binary, ['-A', chain.name, ...rule]);
  }
  const jump = ['-i', BRIDGE_MATCH, '-j', chain.name];
  if (!(await succeeds(binary, ['-C', chain.parent, ...jump]))) {
    await iptables(binary, ['-I', chain.parent, '1', ...jump]);
  }
}

/** Installs the isolation rules for every VM bridge (IPv6 too when ip6tables works). */
export async function installLibvirtIsolation(): Promise<void> {
  for (const chain of CHAINS.iptables) await apply('iptables', chain);
  if (await succeeds('ip6tables', ['-S', 'INPUT'])) {
    for (const chain of CHAINS.ip6tables) await apply('ip6tables', chain);
  }
}
