// The SSH readiness probe: a banner answers, a bare accept does not, and polling backs off.

import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sshBannerAnswers, waitForSshBanner } from '../../provisioning/ssh-ready.js';

let server: Server | null = null;

/** A TCP server that closes connections at once until `bannerAfterMs`, then greets like sshd. */
async function fakeSshd(bannerAfterMs: number): Promise<{ port: number; connections: () => number }> {
  const since = Date.now();
  let connections = 0;
  server = createServer((socket: Socket) => {
    connections += 1;
    if (Date.now() - since < bannerAfterMs) socket.destroy();
    else socket.end('SSH-2.0-OpenSSH_9.2\r\n');
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, connections: () => connections };
}

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

describe('ssh readiness', () => {
  it('answers on a banner, not on an accept that closes', async () => {
    const open = await fakeSshd(0);
    expect(await sshBannerAnswers({ host: '127.0.0.1', port: open.port })).toBe(true);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    const closing = await fakeSshd(60_000);
    expect(await sshBannerAnswers({ host: '127.0.0.1', port: closing.port }, 500)).toBe(false);
  });

  it('polls soon after the start, then backs off to the interval', async () => {
    const sshd = await fakeSshd(400);
    const t0 = Date.now();
    await waitForSshBanner({ host: '127.0.0.1', port: sshd.port }, { timeoutMs: 5_000 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    // Pauses of 5, 7.5, 11, … ms up to 50: about a dozen probes in 400 ms (a fixed 5 ms would be ~80,
    // a fixed 50 ms 8). Generous bounds: the machine may be busy.
    expect(sshd.connections()).toBeGreaterThanOrEqual(8);
    expect(sshd.connections()).toBeLessThanOrEqual(25);
  });

  it('gives up at the deadline, and when the guest is reported dead', async () => {
    const sshd = await fakeSshd(60_000);
    const ssh = { host: '127.0.0.1', port: sshd.port };
    await expect(waitForSshBanner(ssh, { timeoutMs: 200 })).rejects.toThrow(/did not answer within 200 ms/);
    await expect(waitForSshBanner(ssh, { timeoutMs: 5_000, alive: async () => 'vm container exited with code 1' }))
      .rejects.toThrow('vm container exited with code 1');
  });
});
