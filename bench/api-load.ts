// The API benchmark's load generator, run as its own process (bench/api.ts spawns it, pinned to a
// core): reads a job file, drives autocannon, prints one JSON line of results on stdout.

import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface Request {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadJob {
  url: string;
  connections: number;
  pipelining: number;
  /** seconds of load against `url` (when no `sequences`) */
  duration?: number;
  /** Each sequence is sent once, in order, over its own connection; all connections run at once. */
  sequences?: Request[][];
}

export interface LoadResult {
  total: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  elapsedSeconds: number;
  perSecond: number;
  /** CPU seconds this load generator used (user + system) from its first request to its end. */
  cpuSeconds: number;
}

/** Load for `duration` seconds against one URL. */
async function timed(job: LoadJob): Promise<LoadResult> {
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const r = await autocannon({ url: job.url, connections: job.connections, pipelining: job.pipelining, duration: job.duration ?? 5 });
  const elapsedSeconds = (performance.now() - started) / 1000;
  return {
    total: r.requests.total,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    elapsedSeconds,
    perSecond: r['2xx'] / elapsedSeconds,
    cpuSeconds: cpuSecondsSince(cpu0),
  };
}

/** Every sequence over its own connection (one autocannon instance each), timed to the last response. */
async function sequenced(job: LoadJob, sequences: Request[][]): Promise<LoadResult> {
  // Timed from the first request written to the last response: autocannon first builds every
  // request of every sequence (~0.2 s for 5,000), client work the server never sees; and it notices
  // a reached `amount` only on its 1 s ticker.
  let firstRequestAt = 0;
  let cpuAtFirstRequest = process.cpuUsage();
  let lastResponseAt = 0;
  const setupClient = (client: { once(event: 'request', listener: () => void): void }) =>
    client.once('request', () => {
      if (firstRequestAt !== 0) return;
      firstRequestAt = performance.now();
      cpuAtFirstRequest = process.cpuUsage();
    });
  const onResponse = () => void (lastResponseAt = performance.now());
  // autocannon may leave the last (pipelining − 1) requests of an `amount` unsent: pad with probes.
  const pads: Request[] = Array.from({ length: job.pipelining - 1 }, () => ({ method: 'GET', path: '/health' }));
  const results = await Promise.all(
    sequences.map((seq) => {
      const requests = [...seq, ...pads].map((r) => ({ ...r, onResponse }));
      return autocannon({ url: job.url, connections: 1, pipelining: job.pipelining, amount: requests.length, requests, setupClient });
    }),
  );
  if (firstRequestAt === 0 || lastResponseAt === 0) throw new Error('no request was answered');
  const elapsedSeconds = (lastResponseAt - firstRequestAt) / 1000;
  const sum = (f: (r: Awaited<ReturnType<typeof autocannon>>) => number) => results.reduce((n, r) => n + f(r), 0);
  const ok2xx = sum((r) => r['2xx']);
  return {
    total: sum((r) => r.requests.total),
    ok2xx,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors + r.timeouts),
    elapsedSeconds,
    perSecond: ok2xx / elapsedSeconds,
    cpuSeconds: cpuSecondsSince(cpuAtFirstRequest),
  };
}

function cpuSecondsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

function run(job: LoadJob): Promise<LoadResult> {
  return job.sequences ? sequenced(job, job.sequences) : timed(job);
}

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadJob;
run(job).then(
  (result) => process.stdout.write(JSON.stringify(result) + '\n'),
  (err: unknown) => {
    process.stderr.write(`load generator failed: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
