// A provider process in miniature for the restart test: opens the node DB, provisions one lease's VM
// through the Reconciler, prints the record as one JSON line, then idles until it is killed.
// Usage: node --import tsx reconciler-child.ts <config.json>

import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { DockerBackend } from '../../../provisioning/docker/backend.js';
import { Reconciler } from '../../../provisioning/reconciler.js';
import { VmRecords } from '../../../provisioning/records.js';
import { LeaseBook, leaseFromJson } from './lease-book.js';

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as {
  dbPath: string; image: string; gatewayLine: string; lease: Record<string, unknown>;
};
const leases = new LeaseBook();
const lease = leases.put(leaseFromJson(config.lease));
const backend = new DockerBackend({ image: config.image });
await backend.check(); // as the node does at start: the VM joins a warm network namespace
const reconciler = new Reconciler({
  backend,
  records: new VmRecords(new Database(config.dbPath)),
  leases,
  gatewayAuthorizedKey: config.gatewayLine,
  logger: pino({ level: 'info' }, pino.destination(2)),
  registry: new Registry(),
});
await reconciler.start(200);
const record = await reconciler.ensure(lease);
process.stdout.write(`${JSON.stringify({ status: record.status, backendId: record.backendId, error: record.error })}\n`);
setInterval(() => undefined, 1 << 30);
