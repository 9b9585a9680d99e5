// Durability: a child process applies blocks and reports each committed hash; the test SIGKILLs it
// mid-run, reopens the store and checks every reported block is there, with consistent state.
// The child runs from the compiled tree (dist/), which the project's test command builds first.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../ledger/store/db.js';
import { openLedger } from '../../ledger/ledger.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS } from '../../ledger/genesis/devnet.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = join(ROOT, 'dist/test/integration/ledger-durability-child.js');
const KILL_AFTER = 300;

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function runAndKill(dbPath: string): Promise<{ hashes: string[]; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dbPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    const hashes: string[] = [];
    let buffered = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      hashes.push(...lines);
      if (!killed && hashes.length >= KILL_AFTER) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (!killed) reject(new Error(`child exited on its own (code ${code}): ${stderr}`));
      else resolve({ hashes, signal });
    });
  });
}

describe('ledger durability across kill -9', () => {
  it('keeps every block the child reported as applied', async () => {
    expect(existsSync(CHILD), `missing ${CHILD}: run \`npm run build\` first`).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'netnode-durability-'));
    dirs.push(dir);
    const dbPath = join(dir, 'node.db');

    const { hashes, signal } = await runAndKill(dbPath);
    expect(signal).toBe('SIGKILL');
    expect(hashes.length).toBeGreaterThanOrEqual(KILL_AFTER);

    const db = openDatabase(dbPath);
    const ledger = openLedger({
      db,
      genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS },
      powDifficulty: 2n,
      now: () => 1_800_000_000_000_000_000n,
    });
    for (const h of hashes) expect(ledger.getBlock(h), h).not.toBeNull();
    // State rebuilt from the tables is consistent: chains are contiguous and supply is conserved.
    const supply = ledger.supply();
    expect(supply.conserved).toBe(true);
    const total = ledger.accounts().reduce((n, a) => n + a.block_count, 0);
    expect(total).toBe(supply.blocks);
    for (const a of ledger.accounts()) {
      const chain = ledger.accountChain(a.address);
      expect(chain.blocks).toHaveLength(a.block_count);
      chain.blocks.forEach((c, i) => expect(c.block.previous).toBe(i === 0 ? '0' : chain.blocks[i - 1]!.block.hash));
      expect(chain.blocks.at(-1)!.block.hash).toBe(a.frontier);
    }
    ledger.close();
    db.close();
  }, 60_000);
});
