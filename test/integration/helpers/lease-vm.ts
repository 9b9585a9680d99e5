// A leased VM as the provider runs it: a Docker-backend machine (provider.md §5.1) with the lease's
// access key and the gateway key installed for root. Fails (never skips) without Docker.

import { execFileSync } from 'node:child_process';
import { generateCredentials } from '../../../provisioning/credentials.js';
import { DockerBackend } from '../../../provisioning/docker/backend.js';
import { requireDockerImage } from './docker-vm.js';

export interface LeaseVm {
  host: string;
  port: number;
  /** The container's sshd output (`sshd -D -e`). */
  log(): string;
  stop(): Promise<void>;
}

export async function startDockerLeaseVm(leaseHash: string, accessPubKey: string, gatewayKeyLine: string): Promise<LeaseVm> {
  const backend = new DockerBackend({ image: await requireDockerImage() });
  await backend.check();
  const handle = await backend.create({
    leaseHash,
    vcpus: 1,
    memoryMb: 512,
    diskGb: 5,
    accessPubKey,
    gatewayAuthorizedKey: gatewayKeyLine,
    ...generateCredentials(),
  });
  return {
    host: handle.ssh.host,
    port: handle.ssh.port,
    log: () => execFileSync('sh', ['-c', `docker logs ${handle.backendId} 2>&1`]).toString(),
    stop: () => backend.destroy(leaseHash),
  };
}
