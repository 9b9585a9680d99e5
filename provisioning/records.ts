// Persisted VM records (provider.md §5.3, §5.5) in the node's SQLite file, table `vm_records`.
// Owned by provisioning/ alone; it never reads ledger tables.

import type Database from 'better-sqlite3';
import type { SshEndpoint } from './backend.js';
import type { VmCredentials } from './credentials.js';
import type { Resources } from './floors.js';

export type VmStatus = 'provisioning' | 'running' | 'failed' | 'stopped';
export const VM_STATUSES: readonly VmStatus[] = ['provisioning', 'running', 'failed', 'stopped'];

export interface VmRecord {
  leaseHash: string;
  backend: string;
  /** Empty until the backend reports its identifier. */
  backendId: string;
  status: VmStatus;
  /** `""` unless `failed`. */
  error: string;
  /** The lease's requested values (floors are the backend's business). */
  resources: Resources;
  credentials: VmCredentials;
  /** When provisioning started, ns since the epoch. */
  createdAt: bigint;
  ssh: SshEndpoint | null;
  /** When the record entered `stopped` or `failed` (ns), else null; drives forgetting. */
  endedAt: bigint | null;
}

/** Records in `stopped` or `failed` are forgotten this long after they ended (provider.md §5.2). */
export const ENDED_RECORD_TTL_NS = 3_600_000_000_000n;

interface Row {
  lease_hash: string;
  backend: string;
  backend_id: string;
  status: VmStatus;
  error: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  username: string;
  password: string;
  created_at: bigint;
  ssh_host: string | null;
  ssh_port: bigint | null;
  ended_at: bigint | null;
}

function fromRow(r: Row): VmRecord {
  return {
    leaseHash: r.lease_hash,
    backend: r.backend,
    backendId: r.backend_id,
    status: r.status,
    error: r.error,
    resources: { vcpus: Number(r.vcpus), memoryMb: Number(r.memory_mb), diskGb: Number(r.disk_gb) },
    credentials: { username: r.username, password: r.password },
    createdAt: r.created_at,
    ssh: r.ssh_host !== null && r.ssh_port !== null ? { host: r.ssh_host, port: Number(r.ssh_port) } : null,
    endedAt: r.ended_at,
  };
}

function toParams(v: VmRecord): Record<string, unknown> {
  return {
    lease_hash: v.leaseHash,
    backend: v.backend,
    backend_id: v.backendId,
    status: v.status,
    error: v.error,
    vcpus: v.resources.vcpus,
    memory_mb: v.resources.memoryMb,
    disk_gb: v.resources.diskGb,
    username: v.credentials.username,
    password: v.credentials.password,
    created_at: v.createdAt,
    ssh_host: v.ssh?.host ?? null,
    ssh_port: v.ssh?.port ?? null,
    ended_at: v.endedAt,
  };
}

export class VmRecords {
  private readonly getStmt: Database.Statement;
  private readonly listStmt: Database.Statement;
  private readonly upsertStmt: Database.Statement;
  private readonly forgetStmt: Database.Statement;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS vm_records (
        lease_hash TEXT PRIMARY KEY,
        backend    TEXT NOT NULL,
        backend_id TEXT NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('provisioning','running','failed','stopped')),
        error      TEXT NOT NULL,
        vcpus      INTEGER NOT NULL,
        memory_mb  INTEGER NOT NULL,
        disk_gb    INTEGER NOT NULL,
        username   TEXT NOT NULL,
        password   TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        ssh_host   TEXT,
        ssh_port   INTEGER,
        ended_at   INTEGER
      ) STRICT`);
    this.getStmt = db.prepare('SELECT * FROM vm_records WHERE lease_hash = ?').safeIntegers(true);
    this.listStmt = db.prepare('SELECT * FROM vm_records ORDER BY created_at, lease_hash').safeIntegers(true);
    this.upsertStmt = db.prepare(`
      INSERT INTO vm_records (lease_hash, backend, backend_id, status, error, vcpus, memory_mb, disk_gb,
                              username, password, created_at, ssh_host, ssh_port, ended_at)
      VALUES (@lease_hash, @backend, @backend_id, @status, @error, @vcpus, @memory_mb, @disk_gb,
              @username, @password, @created_at, @ssh_host, @ssh_port, @ended_at)
      ON CONFLICT (lease_hash) DO UPDATE SET
        backend = excluded.backend, backend_id = excluded.backend_id, status = excluded.status,
        error = excluded.error, vcpus = excluded.vcpus, memory_mb = excluded.memory_mb,
        disk_gb = excluded.disk_gb, username = excluded.username, password = excluded.password,
        created_at = excluded.created_at, ssh_host = excluded.ssh_host, ssh_port = excluded.ssh_port,
        ended_at = excluded.ended_at`);
    this.forgetStmt = db.prepare(
      "DELETE FROM vm_records WHERE status IN ('stopped','failed') AND ended_at IS NOT NULL AND ended_at <= ?",
    );
  }

  get(leaseHash: string): VmRecord | null {
    const row = this.getStmt.get(leaseHash) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Every record, oldest first. */
  list(): VmRecord[] {
    return (this.listStmt.all() as Row[]).map(fromRow);
  }

  put(record: VmRecord): void {
    this.upsertStmt.run(toParams(record));
  }

  /** Deletes `stopped`/`failed` records that ended at least `ttlNs` before `nowNs`; returns how many. */
  forgetEnded(nowNs: bigint, ttlNs: bigint = ENDED_RECORD_TTL_NS): number {
    return this.forgetStmt.run(nowNs - ttlNs).changes;
  }
}

/** The VM record as the API and p2p messages show it (provider.md §5.3); credentials only when asked. */
export function vmRecordJson(v: VmRecord, withCredentials: boolean): Record<string, unknown> {
  return {
    lease_hash: v.leaseHash,
    status: v.status,
    resources: { vcpus: v.resources.vcpus, memory_mb: v.resources.memoryMb, disk_gb: v.resources.diskGb },
    ...(withCredentials ? { credentials: { username: v.credentials.username, password: v.credentials.password } } : {}),
    created_at: v.createdAt,
    error: v.error,
  };
}
