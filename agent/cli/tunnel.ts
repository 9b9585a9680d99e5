// `netnode tunnel <lease> --local-port N [--node URL]`: a local TCP port whose every connection is a
// `POST /tunnel/{lease}/tcp` to the node (api.md §8.3) — for ssh, scp and rsync to the leased VM.
// `--stdio` serves one tunnel on stdin/stdout instead (for `ssh -o ProxyCommand=…`).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { parseArgs } from 'node:util';
import { isHash } from '../../ledger/codec/hex.js';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { IDLE_LIMIT_MS } from '../../gateway/lease-access.js';
import { pipeBoth } from '../../gateway/pipe.js';
import { opensshPrivateKey } from '../../gateway/ssh/keys.js';
import { defaultWalletDir } from '../wallet/wallet.js';
import { loadAccessSeed } from './access-key.js';

export const DEFAULT_NODE_URL = 'http://127.0.0.1:8080';
const MAX_RESPONSE_HEAD = 64 * 1024;

/** The tunnel's static X-Signature: ed25519 by the access key over the 32 raw lease-hash bytes. */
export function tunnelSignature(accessSeed: Uint8Array, leaseHash: string): string {
  return signEd25519(accessSeed, Buffer.from(leaseHash, 'hex'));
}

/**
 * Opens a tunnel: resolves with the connection once the node answered `200`, ready to carry the
 * VM's SSH stream (bytes received behind the status line are pushed back in front). The socket is
 * paused: `pipe()` it or call `resume()` after attaching a `data` listener.
 */
export async function openHttpTunnel(nodeUrl: string, leaseHash: string, signature: string): Promise<Socket> {
  const url = new URL(nodeUrl);
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const socket: Socket = secure
    ? tlsConnect({ host, port, servername: host })
    : tcpConnect({ host, port, allowHalfOpen: true, noDelay: true });
  const prefix = url.pathname.replace(/\/+$/, '');
  const head =
    `POST ${prefix}/tunnel/${leaseHash}/tcp HTTP/1.1\r\n` +
    `Host: ${url.host}\r\nX-Signature: ${signature}\r\nContent-Length: 0\r\n\r\n`;
  return await new Promise<Socket>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        if (received.length > MAX_RESPONSE_HEAD) fail(new Error('tunnel: response head too large'));
        return;
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received.subarray(0, end).toString('latin1'))?.[1];
      if (status === '200') {
        socket.off('data', onData);
        socket.off('error', fail);
        socket.off('end', onEnd);
        socket.pause();
        const rest = received.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        resolve(socket);
        return;
      }
      // An error answer: its body is `{"error": …}` and the node closes the connection after it.
      socket.off('data', onData);
      socket.off('end', onEnd);
      const chunks: Buffer[] = [received.subarray(end + 4)];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.once('end', () => {
        socket.destroy();
        const body = Buffer.concat(chunks).toString('utf8');
        const message = /"error":\s*"((?:[^"\\]|\\.)*)"/.exec(body)?.[1] ?? body.trim();
        reject(new Error(`tunnel refused (${status ?? 'no status'}): ${message}`));
      });
    };
    const onEnd = () => fail(new Error('tunnel: connection closed before an answer'));
    socket.on('data', onData);
    socket.once('error', fail);
    socket.once('end', onEnd);
    socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(head));
  });
}

export interface TunnelTarget {
  nodeUrl: string;
  leaseHash: string;
  signature: string;
}

/** Listens on `host:port`; every accepted connection gets its own tunnel. */
export function serveLocalTunnel(target: TunnelTarget, port: number, host = '127.0.0.1', onError?: (err: Error) => void): Promise<Server> {
  const server = createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (local) => {
    local.on('error', () => {});
    openHttpTunnel(target.nodeUrl, target.leaseHash, target.signature).then(
      (remote) => {
        pipeBoth(local, remote, { idleMs: IDLE_LIMIT_MS });
      },
      (err: Error) => {
        onError?.(err);
        local.destroy();
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

const USAGE = 'usage: netnode tunnel <lease hash> (--local-port N | --stdio) [--node URL] [--wallet DIR] [--bind ADDRESS]';

export async function runTunnelCommand(argv: string[], signal?: AbortSignal): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'local-port': { type: 'string' },
        stdio: { type: 'boolean', default: false },
        node: { type: 'string', default: DEFAULT_NODE_URL },
        wallet: { type: 'string', default: defaultWalletDir() },
        bind: { type: 'string', default: '127.0.0.1' },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const leaseHash = positionals[0];
  const port = values['local-port'] === undefined ? undefined : Number(values['local-port']);
  if (!isHash(leaseHash) || positionals.length !== 1 || (port === undefined) === !values.stdio ||
      (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536))) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let target: TunnelTarget;
  try {
    target = { nodeUrl: values.node!, leaseHash, signature: tunnelSignature(loadAccessSeed(values.wallet!, leaseHash), leaseHash) };
  } catch (err) {
    process.stderr.write(`netnode tunnel: ${(err as Error).message}\n`);
    return 1;
  }

  if (values.stdio) return await stdioTunnel(target);

  const server = await serveLocalTunnel(target, port!, values.bind, (err) =>
    process.stderr.write(`netnode tunnel: ${err.message}\n`),
  );
  const bound = (server.address() as { port: number }).port;
  process.stderr.write(`netnode tunnel: ${values.bind}:${bound} → lease ${leaseHash.slice(0, 12)}… via ${target.nodeUrl}\n`);
  // OpenSSH reads keys in its own format: keep the access key beside its seed, mode 0600.
  mkdirSync(join(values.wallet!, 'access'), { recursive: true, mode: 0o700 });
  const keyFile = join(values.wallet!, 'access', `${leaseHash}.openssh`);
  writeFileSync(keyFile, opensshPrivateKey(loadAccessSeed(values.wallet!, leaseHash)), { mode: 0o600 });
  process.stderr.write(`netnode tunnel: connect with  ssh -i ${keyFile} -p ${bound} root@${values.bind}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    signal?.addEventListener('abort', stop, { once: true });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return 0;
}

async function stdioTunnel(target: TunnelTarget): Promise<number> {
  let remote: Socket;
  try {
    remote = await openHttpTunnel(target.nodeUrl, target.leaseHash, target.signature);
  } catch (err) {
    process.stderr.write(`netnode tunnel: ${(err as Error).message}\n`);
    return 1;
  }
  return await new Promise<number>((resolve) => {
    remote.pipe(process.stdout);
    process.stdin.pipe(remote);
    remote.once('close', () => resolve(0));
    remote.once('error', () => resolve(1));
  });
}
