// `netnode ssh <lease> [--node URL] [--gateway host:port] [-o option]… [-- command…]`: OpenSSH into
// the leased VM with the lease's access key from the wallet (never the account key). Through the
// provider's SSH gateway when `--gateway` is given (`ssh -p port <lease>@host`, provider.md §6),
// otherwise as root through the node's HTTP tunnel (api.md §8.3) via a local forwarding port.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isHash } from '../../ledger/codec/hex.js';
import { opensshPrivateKey } from '../../gateway/ssh/keys.js';
import { vmName } from '../../provisioning/backend.js';
import { defaultWalletDir } from '../wallet/wallet.js';
import { loadAccessSeed } from './access-key.js';
import { DEFAULT_NODE_URL, serveLocalTunnel, tunnelSignature } from './tunnel.js';

const USAGE =
  'usage: netnode ssh <lease hash> [--node URL | --gateway HOST:PORT] [--wallet DIR] [-o ssh_option]… [-- command…]';

export async function runSshCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        node: { type: 'string', default: DEFAULT_NODE_URL },
        gateway: { type: 'string' },
        wallet: { type: 'string', default: defaultWalletDir() },
        o: { type: 'string', short: 'o', multiple: true, default: [] },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [leaseHash, ...command] = positionals;
  const gateway = values.gateway === undefined ? null : parseHostPort(values.gateway);
  if (!isHash(leaseHash) || (values.gateway !== undefined && !gateway)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }

  let seed: Uint8Array;
  try {
    seed = loadAccessSeed(values.wallet!, leaseHash);
  } catch (err) {
    process.stderr.write(`netnode ssh: ${(err as Error).message}\n`);
    return 1;
  }
  const keyDir = mkdtempSync(join(tmpdir(), 'netnode-ssh-'));
  const keyFile = join(keyDir, 'access_key');
  writeFileSync(keyFile, opensshPrivateKey(seed, `lease ${leaseHash.slice(0, 12)}`), { mode: 0o600 });
  const options = ['-i', keyFile, '-o', 'IdentitiesOnly=yes', ...values.o!.flatMap((o) => ['-o', o])];

  let forwarder: Server | null = null;
  try {
    let args: string[];
    if (gateway) {
      args = [...options, '-p', String(gateway.port), `${leaseHash}@${gateway.host}`];
    } else {
      const target = { nodeUrl: values.node!, leaseHash, signature: tunnelSignature(seed, leaseHash) };
      forwarder = await serveLocalTunnel(target, 0, '127.0.0.1', (err) => process.stderr.write(`netnode ssh: ${err.message}\n`));
      const port = (forwarder.address() as { port: number }).port;
      // Known-hosts entries follow the VM, not the ephemeral local port.
      args = [...options, '-o', `HostKeyAlias=${vmName(leaseHash)}`, '-p', String(port), 'root@127.0.0.1'];
    }
    if (command.length > 0) args.push('--', ...command);
    const child = spawn('ssh', args, { stdio: 'inherit' });
    return await new Promise<number>((resolve) => {
      child.once('error', (err) => {
        process.stderr.write(`netnode ssh: cannot run ssh: ${err.message}\n`);
        resolve(1);
      });
      child.once('exit', (code, sig) => resolve(code ?? (sig ? 255 : 1)));
    });
  } finally {
    forwarder?.close();
    rmSync(keyDir, { recursive: true, force: true });
  }
}

function parseHostPort(text: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[3]);
  return port > 0 && port < 65536 ? { host: m[1] ?? m[2]!, port } : null;
}
