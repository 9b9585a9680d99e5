// The API benchmark's load generator, run as its own process (bench/api.ts spawns it, pinned to a
// core): reads a job file, drives autocannon, prints one JSON line of results on stdout.

import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadJob {
  url: string;
  connections: number;
  pipelining: number;
  /** seconds; ignored when `amount` is set */
  duration?: number;
  /** total requests; with `requests`, each is sent once in order when connections = 1 */
  amount?: number;
  requests?: { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string }[];
}

export interface LoadResult {
  total: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  elapsedSeconds: number;
  perSecond: number;
}

async function run(job: LoadJob): Promise<LoadResult> {
  // autocannon notices a reached `amount` only on its 1 s ticker: time to the last response instead.
  let lastResponseAt = 0;
  const requests = job.requests?.map((r) => ({ ...r, onResponse: () => void (lastResponseAt = performance.now()) }));
  const started = performance.now();
  const r = await autocannon({
    url: job.url,
    connections: job.connections,
    pipelining: job.pipelining,
    ...(job.amount !== undefined ? { amount: job.amount } : { duration: job.duration ?? 5 }),
    ...(requests ? { requests } : {}),
  });
  const finished = job.amount !== undefined && lastResponseAt > 0 ? lastResponseAt : performance.now();
  const elapsedSeconds = (finished - started) / 1000;
  const ok2xx = r['2xx'];
  return {
    total: r.requests.total,
    ok2xx,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    elapsedSeconds,
    perSecond: ok2xx / elapsedSeconds,
  };
}

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadJob;
run(job).then(
  (result) => process.stdout.write(JSON.stringify(result) + '\n'),
  (err: unknown) => {
    process.stderr.write(`load generator failed: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
