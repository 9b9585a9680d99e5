// Integration harness: runs the real daemon (`node dist/agent/cli/main.js node --dev …`) as a child
// process on free ports with a fresh data directory, waits for /health, and gives tests a small
// HTTP client that speaks raw JSON text through the project codec (so integers above 2^53 stay
// exact). dist/ must be built first (`npx tsc -p .`; the test command does it).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseJson, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';

/** The project root, found upwards from this file (it runs from test/ under vitest and from dist/test/ in benchmarks). */
function findProjectRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('project root (package.json) not found');
    dir = up;
  }
  return dir;
}

export const PROJECT_ROOT = findProjectRoot();
export const DAEMON_MAIN = join(PROJECT_ROOT, 'dist/agent/cli/main.js');

/** A port that was free a moment ago (bound to 0, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  text: string;
  /** The body parsed by the project codec (integers as bigint); undefined when not JSON. */
  json: JsonValue | undefined;
}

export interface RequestOptions {
  /** A string is sent verbatim; anything else is encoded with the project codec. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Minimal HTTP client over node:http with keep-alive; every header is under the test's control. */
export class ApiClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });

  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  get baseUrl(): string {
    return `http://${this.host}:${this.port}`;
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : stringifyJson(opts.body);
    const headers: Record<string, string> = { ...opts.headers };
    if (body !== undefined) {
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    return new Promise((resolveRes, reject) => {
      const req = httpRequest({ host: this.host, port: this.port, method, path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: JsonValue | undefined;
          try {
            json = text.trim() === '' ? undefined : parseJson(text);
          } catch {
            json = undefined;
          }
          resolveRes({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  get(path: string, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request('GET', path, { ...(headers ? { headers } : {}) });
  }

  post(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request('POST', path, { body, ...(headers ? { headers } : {}) });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface DevNodeOptions {
  /** Extra flags after `node --dev --data … --api-port … --metrics-addr …`. */
  args?: string[];
  /** Extra environment (e.g. NET_API_ADMIN_TOKEN). */
  env?: Record<string, string>;
  /** Reuse a data directory (restart tests); a fresh temporary one otherwise. */
  dataDir?: string;
  /** Keep the data directory after stop (default: removed when the harness created it). */
  keepData?: boolean;
}

export interface DevNode {
  readonly proc: ChildProcess;
  readonly dataDir: string;
  readonly apiPort: number;
  readonly opsPort: number;
  readonly api: ApiClient;
  readonly ops: ApiClient;
  /** stdout + stderr of the daemon so far. */
  logs(): string;
  /** SIGTERM (or `signal`), wait for exit (SIGKILL after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const STARTUP_TIMEOUT_MS = 30_000;

/** Start `netnode node --dev` as a child process and wait until `GET /health` answers 200. */
export async function startDevNode(opts: DevNodeOptions = {}): Promise<DevNode> {
  if (!existsSync(DAEMON_MAIN)) throw new Error(`${DAEMON_MAIN} missing: build first with \`npx tsc -p .\``);
  const ownsData = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'netnode-it-'));
  const apiPort = await freePort();
  const opsPort = await freePort();
  const args = [
    DAEMON_MAIN,
    'node',
    '--dev',
    '--data',
    dataDir,
    '--api-port',
    String(apiPort),
    '--metrics-addr',
    `127.0.0.1:${opsPort}`,
    ...(opts.args ?? []),
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  if (opts.env?.NET_API_ADMIN_TOKEN === undefined) delete env.NET_API_ADMIN_TOKEN;
  const proc = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.once('exit', (code, signal) => res({ code, signal })),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const api = new ApiClient('127.0.0.1', apiPort);
  const ops = new ApiClient('127.0.0.1', opsPort);
  const node: DevNode = {
    proc,
    dataDir,
    apiPort,
    opsPort,
    api,
    ops,
    logs: () => output,
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      if (!hasExited) proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      api.close();
      ops.close();
      if (ownsData && !opts.keepData) rmSync(dataDir, { recursive: true, force: true });
      return result;
    },
  };

  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (hasExited) throw new Error(`daemon exited during start-up:\n${output}`);
    try {
      const res = await api.get('/health', { Host: 'localhost' });
      if (res.status === 200) return node;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await node.stop('SIGKILL');
      throw new Error(`daemon did not become healthy within ${STARTUP_TIMEOUT_MS} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
