// Host firewall for the VM bridge (provider.md §5.1: no connection from a VM to the host's own
// services or to another tenant's machine). Docker's `enable_icc=false` already drops bridge-to-
// bridge forwarding; these rules make both guarantees independent of Docker's own chains:
//   INPUT  -i <bridge>: only replies to connections the host opened (the SSH port forward) pass;
//   DOCKER-USER -i <bridge> -o <bridge>: dropped (cross-VM).
// Installation is idempotent: each chain is rewritten only when its rules differ from the wanted ones,
// and each jump is inserted only when missing.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const INPUT_CHAIN = 'NETNODE-VM-INPUT';
export const FORWARD_CHAIN = 'NETNODE-VM-FORWARD';

interface ChainPlan {
  table: 'filter';
  chain: string;
  rules: string[][];
  /** Built-in or Docker chain that jumps to `chain`, with the jump's match. */
  parent: string;
  jump: string[];
}

async function iptables(binary: string, args: string[]): Promise<string> {
  const { stdout } = await run(binary, ['-w', ...args]);
  return stdout;
}

async function succeeds(binary: string, args: string[]): Promise<boolean> {
  try {
    await iptables(binary, args);
    return true;
  } catch {
    return false;
  }
}

function plans(bridge: string, withForward: boolean): ChainPlan[] {
  const input: ChainPlan = {
    table: 'filter',
    chain: INPUT_CHAIN,
    rules: [
      ['-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT'],
      ['-j', 'DROP'],
    ],
    parent: 'INPUT',
    jump: ['-i', bridge, '-j', INPUT_CHAIN],
  };
  const forward: ChainPlan = {
    table: 'filter',
    chain: FORWARD_CHAIN,
    rules: [['-o', bridge, '-j', 'DROP']],
    parent: 'DOCKER-USER',
    jump: ['-i', bridge, '-j', FORWARD_CHAIN],
  };
  return withForward ? [input, forward] : [input];
}

async function applyPlan(binary: string, plan: ChainPlan): Promise<void> {
  if (!(await succeeds(binary, ['-t', plan.table, '-S', plan.chain]))) {
    await iptables(binary, ['-t', plan.table, '-N', plan.chain]);
  }
  const wanted = plan.rules.map((r) => `-A ${plan.chain} ${r.join(' ')}`);
  const current = (await iptables(binary, ['-t', plan.table, '-S', plan.chain]))
    .split('\n').filter((l) => l.startsWith('-A '));
  if (current.join('\n') !== wanted.join('\n')) {
    await iptables(binary, ['-t', plan.table, '-F', plan.chain]);
    for (const rule of plan.rules) await iptables(binary, ['-t', plan.table, '-A', plan.chain, ...rule]);
  }
  if (!(await succeeds(binary, ['-t', plan.table, '-S', plan.parent]))) {
    await iptables(binary, ['-t', plan.table, '-N', plan.parent]);
  }
  if (!(await succeeds(binary, ['-t', plan.table, '-C', plan.parent, ...plan.jump]))) {
    await iptables(binary, ['-t', plan.table, '-I', plan.parent, '1', ...plan.jump]);
  }
}

/** Installs the isolation rules for `bridge` (IPv4 always; IPv6 INPUT too when ip6tables exists). */
export async function installVmIsolation(bridge: string): Promise<void> {
  for (const plan of plans(bridge, true)) await applyPlan('iptables', plan);
  // Guests run with IPv6 disabled; the v6 INPUT rule covers the bridge's link-local address anyway.
  if (await succeeds('ip6tables', ['-S', 'INPUT'])) {
    for (const plan of plans(bridge, false)) await applyPlan('ip6tables', plan);
  }
}
