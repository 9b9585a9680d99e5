// gateway/pipe.ts between two real TCP sockets, the path where each direction reads into one
// reusable buffer: bytes a socket had already read before the pipe started come first, a slow
// reader on either end (writes left pending, so the buffer must not be refilled) gets every byte
// intact, and closing a socket through its original object closes the pipe.

import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pipeBoth } from '../../gateway/pipe.js';

const servers: Server[] = [];

afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A listening server; resolves its port. */
async function listen(onSocket: (s: Socket) => void): Promise<number> {
  const srv = createServer({ allowHalfOpen: true }, onSocket);
  servers.push(srv);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return (srv.address() as { port: number }).port;
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** Reads everything until EOF, pausing 2 ms after every 256 KiB: the writer sees backpressure. */
function slowDigest(s: Socket): Promise<{ hex: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let sincePause = 0;
  return new Promise((resolve) => {
    s.on('data', (d: Buffer) => {
      hash.update(d);
      bytes += d.length;
      sincePause += d.length;
      if (sincePause >= 256 * 1024) {
        sincePause = 0;
        s.pause();
        setTimeout(() => s.resume(), 2);
      }
    });
    s.on('end', () => resolve({ hex: hash.digest('hex'), bytes }));
  });
}

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/**
 * client ⇄ [relay: accepted socket ⇄ upstream socket] ⇄ far end. The upstream socket is connected
 * and left paused until `upstreamReady` resolves, as the tunnel leaves the VM's socket before piping.
 */
async function relay(far: (s: Socket) => void, upstreamReady: (up: Socket) => Promise<void> = async () => {}) {
  const farPort = await listen(far);
  let onClose!: () => void;
  const closed = new Promise<void>((resolve) => (onClose = resolve));
  let originals!: { accepted: Socket; upstream: Socket };
  const relayPort = await listen((accepted) => {
    void connected(farPort).then(async (upstream) => {
      upstream.pause();
      await upstreamReady(upstream);
      originals = { accepted, upstream };
      pipeBoth(accepted, upstream, { idleMs: 60_000, onClose });
    });
  });
  const client = await connected(relayPort);
  return { client, closed, originals: () => originals };
}

describe('pipeBoth between TCP sockets', () => {
  it('forwards bytes the upstream socket read before the pipe, then carries 24 MiB each way intact past slow readers', async () => {
    const toFar = randomBytes(24 * 1024 * 1024);
    const toClient = randomBytes(24 * 1024 * 1024);
    let farGot!: Promise<{ hex: string; bytes: number }>;
    const { client } = await relay(
      (s) => {
        s.write('BANNER\n');
        farGot = slowDigest(s);
        s.end(toClient);
      },
      // Wait until the banner sits in the paused socket's buffer.
      async (up) => {
        while (up.readableLength === 0) await new Promise((r) => setTimeout(r, 5));
      },
    );
    const clientGot = slowDigest(client);
    client.end(toFar);
    const [atClient, atFar] = await Promise.all([clientGot, new Promise((r) => setTimeout(r, 50)).then(() => farGot)]);
    expect(atClient.bytes).toBe(7 + toClient.length);
    expect(atClient.hex).toBe(sha256(Buffer.concat([Buffer.from('BANNER\n'), toClient])));
    expect(atFar.bytes).toBe(toFar.length);
    expect(atFar.hex).toBe(sha256(toFar));
  });

  it('closes both connections when a socket is destroyed through its original object', async () => {
    let farEnded!: Promise<void>;
    const { client, closed, originals } = await relay((s) => {
      farEnded = new Promise((resolve) => s.once('end', () => resolve()));
      s.on('error', () => {});
      s.on('data', (d: Buffer) => s.write(d));
    });
    client.on('error', () => {});
    client.write('ping');
    await new Promise<void>((resolve) => client.once('data', () => resolve()));
    // Both ends are half-open sockets: the relay's close reaches them as EOF.
    const clientEnded = new Promise<void>((resolve) => client.once('end', () => resolve()));
    originals().accepted.destroy();
    await closed;
    await clientEnded;
    await farEnded;
  });
});
