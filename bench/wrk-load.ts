// Replays request sequences with wrk (bench/intake-wrk.lua), one wrk thread and connection per
// sequence, pinned to a core. wrk is a C load generator: on a 2-core machine it leaves the server
// most of the CPU that autocannon's per-request JavaScript would take.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../test/integration/harness.js';
import type { LoadResult, Request } from './api-load.js';
import { cpuSeconds } from './stats.js';

const SCRIPT = join(PROJECT_ROOT, 'bench/intake-wrk.lua');

export function wrkAvailable(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

function httpRequest(r: Request, host: string): string {
  const head = `${r.method} ${r.path} HTTP/1.1\r\nHost: ${host}\r\n`;
  const headers = Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  if (r.body === undefined) return `${head}${headers}\r\n`;
  return `${head}${headers}Content-Length: ${Buffer.byteLength(r.body)}\r\n\r\n${r.body}`;
}

/**
 * One file per sequence: its requests in groups of `pipelining` (the last group padded with
 * probes), then one group of probes only, the groups separated by NUL bytes.
 */
function writeSequenceFiles(dir: string, sequences: Request[][], pipelining: number, host: string): void {
  const probe = httpRequest({ method: 'GET', path: '/health' }, host);
  sequences.forEach((seq, i) => {
    const groups: string[] = [];
    for (let at = 0; at < seq.length; at += pipelining) {
      const group = seq.slice(at, at + pipelining).map((r) => httpRequest(r, host));
      while (group.length < pipelining) group.push(probe);
      groups.push(group.join(''));
    }
    groups.push(probe.repeat(pipelining));
    writeFileSync(join(dir, `${i}.http`), groups.join('\0'));
  });
}

/** Sends every sequence over its own connection, all at once; timed from the first request to the last answer. */
export async function wrkSequences(url: string, sequences: Request[][], pipelining: number, cpu: string): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'netnode-bench-wrk-'));
  try {
    writeSequenceFiles(dir, sequences, pipelining, new URL(url).host);
    const n = String(sequences.length);
    const child = spawn('taskset', ['-c', cpu, 'wrk', '-t', n, '-c', n, '-d', '600s', '-s', SCRIPT, url, '--', dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let cpuUsed: number | undefined;
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`wrk exited with ${code}: ${out}`))));
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        // Every thread has finished: wrk's main thread would sleep out -d, so interrupt it.
        if (cpuUsed === undefined && out.split('\n').filter((l) => l === 'done').length === sequences.length) {
          cpuUsed = cpuSeconds(child.pid!);
          child.kill('SIGINT');
        }
      });
    });
    if (cpuUsed === undefined) throw new Error(`wrk ended before every sequence was answered: ${out}`);
    const line = out.split('\n').find((l) => l.startsWith('{'));
    if (!line) throw new Error(`wrk printed no result: ${out}`);
    const r = JSON.parse(line) as { elapsedMs: number; requests: number; non2xx: number; errors: number };
    const elapsedSeconds = r.elapsedMs / 1000;
    const sent = sequences.reduce((s, seq) => s + seq.length, 0);
    return {
      total: r.requests,
      ok2xx: r.requests - r.non2xx,
      non2xx: r.non2xx,
      errors: r.errors,
      elapsedSeconds,
      perSecond: sent / elapsedSeconds,
      cpuSeconds: cpuUsed,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
