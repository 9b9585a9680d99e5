// Docker set-up shared by the VM tests: the engine must answer (a test FAILS without it, never skips)
// and the base image is built once (idempotent: reused when its recipe hash is already tagged).
// A failing beforeAll only marks tests skipped, so set-up errors are kept and rethrown per test.

import Docker from 'dockerode';
import { buildDockerImage, dockerImageSettings } from '../../../provisioning/images/docker-image.js';

export const docker = new Docker();

export async function requireDockerImage(): Promise<string> {
  try {
    await docker.ping();
  } catch (err) {
    throw new Error(`Docker engine not available (start dockerd): ${(err as Error).message}`);
  }
  const { ref } = await buildDockerImage(docker, dockerImageSettings(), (line) => process.stderr.write(`${line}\n`));
  return ref;
}

/** A random 64-hex lease hash, so parallel runs and leftovers never collide. */
export function randomLeaseHash(): string {
  return [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export async function containersOfLease(leaseHash: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`net.lease=${leaseHash}`] } });
}

/** Runs set-up once; every test then fails with its error instead of being skipped. */
export function failEveryTestOnSetupError(): { run(setup: () => Promise<void>): Promise<void>; check(): void; failed(): boolean } {
  let error: unknown = null;
  return {
    async run(setup) {
      try {
        await setup();
      } catch (err) {
        error = err;
      }
    },
    check() {
      if (error !== null) throw error;
    },
    failed: () => error !== null,
  };
}
