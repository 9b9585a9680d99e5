// "Ready" for a VM means its SSH server answers with an identification line (`SSH-2.0-…`). A bare TCP
// accept is not enough: Docker's port forwarder accepts connections before the guest listens.

import { connect } from 'node:net';
import type { SshEndpoint } from './backend.js';

/** One probe: resolves true when the endpoint sends an `SSH-` banner within `timeoutMs`. */
export function sshBannerAnswers(ssh: SshEndpoint, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: ssh.host, port: ssh.port });
    let received = '';
    const finish = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (received.includes('\n') || received.length >= 255) finish(received.startsWith('SSH-'));
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
  });
}

/**
 * Polls until the banner answers; throws on timeout or abort. The pause between probes starts at 5 ms
 * and grows by half each time up to `intervalMs` (50 ms): a guest that is nearly up is seen within a
 * few ms, a slow one is not hammered. `alive` (consulted every half second) may veto early (guest died).
 */
export async function waitForSshBanner(
  ssh: SshEndpoint,
  opts: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal; alive?: () => Promise<string | null> },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const maxInterval = opts.intervalMs ?? 50;
  let interval = Math.min(5, maxInterval);
  let nextAliveCheck = Date.now() + 500;
  for (;;) {
    opts.signal?.throwIfAborted();
    if (await sshBannerAnswers(ssh, Math.min(2000, Math.max(100, deadline - Date.now())))) return;
    if (opts.alive && Date.now() >= nextAliveCheck) {
      const dead = await opts.alive();
      if (dead !== null) throw new Error(dead);
      nextAliveCheck = Date.now() + 500;
    }
    if (Date.now() >= deadline) throw new Error(`ssh server at ${ssh.host}:${ssh.port} did not answer within ${opts.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, interval));
    interval = Math.min(maxInterval, interval * 1.5);
  }
}
