// The shipped unit and its provider drop-in pass `systemd-analyze verify` without a single warning,
// checked inside a temporary root where the unit's ExecStart path exists (DECISIONS.md).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '..', '..');

function verify(root: string, unit: string): { status: number | null; output: string } {
  const r = spawnSync('systemd-analyze', ['verify', `--root=${root}`, unit], { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe('systemd unit', () => {
  let root: string;

  beforeAll(() => {
    execFileSync('systemd-analyze', ['--version']); // fails loudly when systemd is missing
    root = mkdtempSync(join(tmpdir(), 'netnode-unit-'));
    cpSync('/usr/lib/systemd/system', join(root, 'usr/lib/systemd/system'), { recursive: true });
    mkdirSync(join(root, 'opt/netnode/bin'), { recursive: true });
    writeFileSync(join(root, 'opt/netnode/bin/netnode'), '#!/bin/sh\n');
    chmodSync(join(root, 'opt/netnode/bin/netnode'), 0o755);
    const units = join(root, 'etc/systemd/system');
    mkdirSync(join(units, 'netnode.service.d'), { recursive: true });
    copyFileSync(join(repo, 'systemd/netnode.service'), join(units, 'netnode.service'));
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('verifies cleanly on its own', () => {
    expect(verify(root, 'netnode.service')).toEqual({ status: 0, output: '' });
  });

  it('verifies cleanly with the provider drop-in', () => {
    const dropIn = join(root, 'etc/systemd/system/netnode.service.d/provider.conf');
    copyFileSync(join(repo, 'systemd/netnode.service.d/provider.conf'), dropIn);
    try {
      expect(verify(root, 'netnode.service')).toEqual({ status: 0, output: '' });
    } finally {
      rmSync(dropIn);
    }
  });

  it('is caught when ExecStart points nowhere (the check can fail)', () => {
    const broken = readFileSync(join(repo, 'systemd/netnode.service'), 'utf8').replace('/opt/netnode/bin/netnode', '/opt/missing/netnode');
    writeFileSync(join(root, 'etc/systemd/system/broken.service'), broken);
    const r = verify(root, 'broken.service');
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/not executable/);
  });

  it('never takes tenant VMs down with the agent and keeps provider access', () => {
    const unit = readFileSync(join(repo, 'systemd/netnode.service'), 'utf8');
    const provider = readFileSync(join(repo, 'systemd/netnode.service.d/provider.conf'), 'utf8');
    expect(unit).toMatch(/^KillMode=process$/m);
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^StateDirectory=netnode$/m);
    expect(provider).toMatch(/^SupplementaryGroups=docker libvirt kvm$/m);
    expect(provider).toMatch(/^PrivateDevices=no$/m);
  });
});
