// Daemon lifecycle: graceful shutdown on SIGTERM/SIGINT (in-flight requests finish, exit code 0, the
// store closed cleanly so a restart on the same data directory serves the same chain), and refused
// start-up flags.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJson, stringifyJson } from '../../ledger/codec/json.js';
import { DAEMON_MAIN, PROJECT_ROOT, startDevNode } from './harness.js';
import { devKey, finishBlock, nowNsExact, sendBlock } from './dev-blocks.js';
import { DEVNET_LEDGER_GENESIS_HASH } from '../../ledger/genesis/devnet.js';

const dataDir = mkdtempSync(join(tmpdir(), 'netnode-lifecycle-'));

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('graceful shutdown', () => {
  it('finishes in-flight requests, exits 0 on SIGTERM, and a restart serves the same chain', async () => {
    const node = await startDevNode({ dataDir, keepData: true });
    const dev1 = devKey(1);
    const send = finishBlock(
      sendBlock(dev1, { previous: DEVNET_LEDGER_GENESIS_HASH, balanceAfter: 41_999_999_000_000n, to: devKey(6).address, amount: 1_000_000n, timestamp: nowNsExact() }),
      dev1,
    );
    expect((await node.api.post('/blocks/send', send)).status).toBe(201);

    // A request whose body is still arriving when the signal comes is finished and answered.
    const text = stringifyJson(send);
    let answer = '';
    const answered = new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: node.apiPort,
          method: 'POST',
          path: '/blocks/send',
          headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) },
        },
        (res) => {
          res.on('data', (c: Buffer) => (answer += c.toString()));
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(text.slice(0, 40));
      setTimeout(() => {
        node.proc.kill('SIGTERM');
        setTimeout(() => req.end(text.slice(40)), 300);
      }, 200);
    });
    expect(await answered).toBe(201);
    expect(parseJson(answer)).toEqual(send);
    expect(await node.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(node.logs()).toContain('signal received signal=SIGTERM');
    expect(node.logs()).toContain('node stopped');
    expect(statSync(join(dataDir, 'node.db')).size).toBeGreaterThan(0);

    const again = await startDevNode({ dataDir, keepData: true });
    try {
      const chain = (await again.api.get(`/accounts/${dev1.address}/chain`)).json as { total: bigint; blocks: { hash: string }[] };
      expect(chain.total).toBe(2n);
      expect(chain.blocks[1]!.hash).toBe(send.hash);
    } finally {
      expect(await again.stop('SIGINT')).toEqual({ code: 0, signal: null });
    }
  });
});

describe('start-up flags', () => {
  function run(args: string[]): { status: number | null; stderr: string } {
    const r = spawnSync(process.execPath, [DAEMON_MAIN, ...args], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, stderr: r.stderr };
  }

  it('refuses --dev with --genesis, unknown flags and bad values with a clear message', () => {
    expect(run(['node', '--dev', '--genesis', '/tmp'])).toEqual({ status: 2, stderr: 'netnode node: --dev cannot be combined with --genesis\n' });
    expect(run(['node', '--dev', '--bogus'])).toEqual({ status: 2, stderr: 'netnode node: unknown flag: --bogus\n' });
    expect(run(['node', '--dev', '--api-port', 'x'])).toEqual({
      status: 2,
      stderr: 'netnode node: invalid value for --api-port: "x" (expected an integer 0…65535)\n',
    });
    expect(run(['node'])).toEqual({ status: 2, stderr: 'netnode node: no genesis: start with --dev (development network) or --genesis <dir>\n' });
    const unknown = run(['frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('netnode: unknown command "frobnicate"');
  });
});
