// VM records in a real SQLite file (provisioning/records.ts), the record's API shape, and the small
// pure pieces every VM depends on: authorized_keys lines, generated credentials, resource floors.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateCredentials, PASSWORD_RE, USERNAME_RE } from '../../provisioning/credentials.js';
import { withFloors } from '../../provisioning/floors.js';
import { ENDED_RECORD_TTL_NS, vmRecordJson, VmRecords, type VmRecord } from '../../provisioning/records.js';
import { checkedKeyLine, ed25519KeyLine, isEd25519KeyLine } from '../../provisioning/ssh-key-line.js';

const T0 = 1_800_000_015_000_000_123n; // beyond 2^53: must survive the round trip exactly

function record(overrides: Partial<VmRecord> = {}): VmRecord {
  return {
    leaseHash: 'ab'.repeat(32),
    backend: 'docker',
    backendId: '',
    status: 'provisioning',
    error: '',
    resources: { vcpus: 2, memoryMb: 1024, diskGb: 10 },
    credentials: { username: 'net-3fa9c01b', password: 'AbCdEfGhIjKlMnOpQrStUv12' },
    createdAt: T0,
    ssh: null,
    endedAt: null,
    ...overrides,
  };
}

describe('VmRecords (SQLite file)', () => {
  let dir: string;
  let path: string;
  let db: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netnode-vm-records-'));
    path = join(dir, 'node.db');
    db = new Database(path);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips a record exactly, across a reopen of the file', () => {
    const records = new VmRecords(db);
    expect(records.get('ab'.repeat(32))).toBeNull();
    records.put(record());
    const running = record({ status: 'running', backendId: 'c0ffee', ssh: { host: '127.0.0.1', port: 32801 } });
    records.put(running);
    db.close();
    db = new Database(path);
    const reopened = new VmRecords(db);
    expect(reopened.get(running.leaseHash)).toEqual(running);
    expect(reopened.get(running.leaseHash)!.createdAt).toBe(T0);
    expect(reopened.list()).toEqual([running]);
  });

  it('keeps its own vm_ table and rejects unknown statuses', () => {
    new VmRecords(db);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    expect(tables.map((t) => t.name)).toEqual(['vm_records']);
    const records = new VmRecords(db);
    expect(() => records.put(record({ status: 'paused' as VmRecord['status'] }))).toThrow(/CHECK constraint/);
  });

  it('lists oldest first', () => {
    const records = new VmRecords(db);
    records.put(record({ leaseHash: '02'.repeat(32), createdAt: T0 + 5n }));
    records.put(record({ leaseHash: '01'.repeat(32), createdAt: T0 + 9n }));
    records.put(record({ leaseHash: '03'.repeat(32), createdAt: T0 }));
    expect(records.list().map((r) => r.leaseHash.slice(0, 2))).toEqual(['03', '02', '01']);
  });

  it('forgets stopped and failed records one hour after they ended, never live ones', () => {
    const records = new VmRecords(db);
    const ended = T0 + 1_000n;
    records.put(record({ leaseHash: '01'.repeat(32), status: 'stopped', endedAt: ended }));
    records.put(record({ leaseHash: '02'.repeat(32), status: 'failed', error: 'boom', endedAt: ended + 1n }));
    records.put(record({ leaseHash: '03'.repeat(32), status: 'running' }));
    records.put(record({ leaseHash: '04'.repeat(32), status: 'provisioning' }));
    expect(records.forgetEnded(ended + ENDED_RECORD_TTL_NS - 1n)).toBe(0);
    expect(records.forgetEnded(ended + ENDED_RECORD_TTL_NS)).toBe(1);
    expect(records.get('01'.repeat(32))).toBeNull();
    expect(records.forgetEnded(ended + 100n * ENDED_RECORD_TTL_NS)).toBe(1);
    expect(records.list().map((r) => r.status)).toEqual(['running', 'provisioning']);
  });
});

describe('vmRecordJson (provider.md §5.3)', () => {
  it('has every field, resources as requested, credentials only when authorized', () => {
    const v = record({ status: 'failed', error: 'vm image x is missing' });
    expect(vmRecordJson(v, false)).toEqual({
      lease_hash: v.leaseHash,
      status: 'failed',
      resources: { vcpus: 2, memory_mb: 1024, disk_gb: 10 },
      created_at: T0,
      error: 'vm image x is missing',
    });
    expect(vmRecordJson(v, true).credentials).toEqual({ username: 'net-3fa9c01b', password: 'AbCdEfGhIjKlMnOpQrStUv12' });
    expect(Object.keys(vmRecordJson(v, true))).toEqual(['lease_hash', 'status', 'resources', 'credentials', 'created_at', 'error']);
  });
});

describe('authorized_keys lines', () => {
  // From `ssh-keygen -t ed25519`: the .pub line and the raw key inside its blob.
  const PUB_LINE = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIGYI+APHx/elbb57DWJsj+gN5zCi1QijlRzKuNehYAS';
  const PUB_HEX = '819823e00f1f1fde95b6f9ec3589b23fa0379cc28b54228e54732ae35e858012';

  it('encodes an access key exactly as OpenSSH does', () => {
    expect(ed25519KeyLine(PUB_HEX)).toBe(PUB_LINE);
    expect(isEd25519KeyLine(PUB_LINE)).toBe(true);
  });

  it('rejects anything but `ssh-ed25519 <base64 of a 32-byte ed25519 blob>`', () => {
    expect(() => ed25519KeyLine(PUB_HEX.toUpperCase())).toThrow('access key must be 64 lowercase hex characters');
    expect(() => ed25519KeyLine(PUB_HEX.slice(2))).toThrow();
    const bad = [
      `${PUB_LINE} comment`,
      `${PUB_LINE}\nssh-ed25519 ${PUB_LINE.split(' ')[1]}`,
      `command="sh" ${PUB_LINE}`,
      PUB_LINE.replace('ssh-ed25519', 'ssh-rsa'),
      `ssh-ed25519 ${Buffer.from('x'.repeat(51)).toString('base64')}`,
      `ssh-ed25519 ${PUB_LINE.split(' ')[1]!.slice(0, -4)}`,
      `ssh-ed25519 $(reboot)`,
      '',
    ];
    for (const line of bad) expect(isEd25519KeyLine(line), line).toBe(false);
    expect(() => checkedKeyLine(bad[0]!, 'gateway key line')).toThrow('gateway key line is not a valid "ssh-ed25519 <base64>" line');
  });
});

describe('generated credentials and floors', () => {
  it('draws net-<8 hex> and a 24-character [A-Za-z0-9] password, different every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const c = generateCredentials();
      expect(c.username).toMatch(USERNAME_RE);
      expect(c.password).toMatch(PASSWORD_RE);
      seen.add(c.password);
    }
    expect(seen.size).toBe(200);
  });

  it('raises resources to 1 vCPU, 512 MiB, 5 GiB and keeps larger requests', () => {
    expect(withFloors({ vcpus: 0, memoryMb: 128, diskGb: 1 })).toEqual({ vcpus: 1, memoryMb: 512, diskGb: 5 });
    expect(withFloors({ vcpus: 3, memoryMb: 4096, diskGb: 50 })).toEqual({ vcpus: 3, memoryMb: 4096, diskGb: 50 });
  });
});
