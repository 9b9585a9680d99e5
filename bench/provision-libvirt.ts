// libvirt provisioning: "provision request → SSH-ready" through LibvirtBackend.create (overlay,
// per-VM network, seed, domain define + start, boot, SSH banner) against a bare QEMU process booting
// the same image, kernel and seed with user-mode networking until its sshd answers — the difference
// is what libvirt and the backend add to the guest's own boot. Domain type from
// NETNODE_LIBVIRT_DOMAIN_TYPE (default `qemu`, software emulation). Runs alternate; median of N.
// Run: npm run bench:provision-libvirt  [-- --runs 3]; `npm run bench:provision` prints it too (3 runs).

import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { tarArchive } from '../provisioning/tar.js';
import { generateCredentials } from '../provisioning/credentials.js';
import { buildLibvirtImage, DEFAULT_LIBVIRT_IMAGE_DIR, type LibvirtImage } from '../provisioning/images/libvirt-image.js';
import { LibvirtBackend } from '../provisioning/libvirt/backend.js';
import type { DomainType } from '../provisioning/libvirt/domain-xml.js';
import { qemuImg } from '../provisioning/libvirt/virsh.js';
import { ed25519KeyLine } from '../provisioning/ssh-key-line.js';
import { waitForSshBanner } from '../provisioning/ssh-ready.js';
import { median } from './stats.js';

const DOMAIN_TYPE = (process.env.NETNODE_LIBVIRT_DOMAIN_TYPE ?? 'qemu') as DomainType;
const IMAGE_DIR = process.env.NETNODE_LIBVIRT_IMAGE_DIR ?? DEFAULT_LIBVIRT_IMAGE_DIR;
const SPEC = { vcpus: 1, memoryMb: 1024, diskGb: 10 };

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function bareQemuBoot(image: LibvirtImage, dir: string): Promise<number> {
  const overlay = join(dir, 'bare.qcow2');
  const seed = join(dir, 'bare-seed.tar');
  const { username, password } = generateCredentials();
  const key = ed25519KeyLine(randomHex(32));
  writeFileSync(seed, tarArchive([
    { path: 'network', mode: 0o600, content: 'ADDRESS=10.0.2.15/24\nGATEWAY=10.0.2.2\nHOSTNAME=bare\n' },
    { path: 'username', mode: 0o600, content: `${username}\n` },
    { path: 'chpasswd', mode: 0o600, content: `${username}:${password}\n` },
    { path: 'root_authorized_keys', mode: 0o600, content: `${key}\n` },
    { path: 'user_authorized_keys', mode: 0o600, content: `${key}\n` },
  ]), { mode: 0o600 });
  const port = await freePort();
  const t0 = performance.now();
  await qemuImg(['create', '-q', '-f', 'qcow2', '-F', 'qcow2', '-b', image.qcow2, overlay, `${SPEC.diskGb}G`]);
  const qemu = spawn('qemu-system-x86_64', [
    '-machine', `pc,accel=${DOMAIN_TYPE === 'kvm' ? 'kvm' : 'tcg'}`, '-m', String(SPEC.memoryMb), '-smp', String(SPEC.vcpus),
    '-display', 'none', '-monitor', 'none', '-serial', 'null', '-no-reboot',
    '-kernel', image.kernel, '-initrd', image.initrd,
    '-append', 'root=LABEL=netvm-root rw console=ttyS0 init=/sbin/netvm-init net.ifnames=0 panic=5 quiet',
    '-drive', `file=${overlay},if=virtio,format=qcow2`,
    '-drive', `file=${seed},if=none,format=raw,id=seed,readonly=on`, '-device', 'virtio-blk-pci,drive=seed,serial=netvm-seed',
    '-netdev', `user,id=n0,hostfwd=tcp:127.0.0.1:${port}-:22`, '-device', 'virtio-net-pci,netdev=n0',
    '-device', 'virtio-rng-pci',
  ], { stdio: 'ignore' });
  try {
    await waitForSshBanner({ host: '127.0.0.1', port }, { timeoutMs: 300_000, intervalMs: 250 });
    return performance.now() - t0;
  } finally {
    qemu.kill('SIGTERM');
    await new Promise((r) => qemu.once('exit', r));
    rmSync(overlay, { force: true });
    rmSync(seed, { force: true });
  }
}

/** Measures and prints the libvirt figure (also part of `npm run bench:provision`). */
export async function reportLibvirtProvisioning(runs: number): Promise<void> {
  const image = await buildLibvirtImage({ dir: IMAGE_DIR }, (l) => process.stderr.write(`image: ${l}\n`));
  // Under /var/tmp so the QEMU user (libvirt-qemu) can traverse to the overlays.
  const dir = mkdtempSync('/var/tmp/netnode-bench-libvirt-');
  chmodSync(dir, 0o711);
  const backend = new LibvirtBackend({ image, domainType: DOMAIN_TYPE, stateDir: dir });
  await backend.check();
  const provisioned: number[] = [];
  const bare: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const leaseHash = randomHex(32);
      const t0 = performance.now();
      await backend.create({
        leaseHash, ...SPEC, accessPubKey: randomHex(32), gatewayAuthorizedKey: ed25519KeyLine(randomHex(32)),
        ...generateCredentials(),
      });
      provisioned.push(performance.now() - t0);
      await backend.destroy(leaseHash);
      bare.push(await bareQemuBoot(image, dir));
      process.stderr.write(`run ${i + 1}: backend ${provisioned[i]!.toFixed(0)} ms, bare qemu ${bare[i]!.toFixed(0)} ms\n`);
    }
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const p = median(provisioned);
  const b = median(bare);
  console.log(`libvirt provision request → SSH-ready (domain type ${DOMAIN_TYPE}, ${SPEC.vcpus} vCPU, ${SPEC.memoryMb} MiB, ${SPEC.diskGb} GiB), median of ${runs}:`);
  console.log(`  LibvirtBackend.create: ${(p / 1000).toFixed(2)} s   runs: ${provisioned.map((x) => (x / 1000).toFixed(2)).join(', ')}`);
  console.log(`  bare qemu, same image: ${(b / 1000).toFixed(2)} s   runs: ${bare.map((x) => (x / 1000).toFixed(2)).join(', ')}`);
  console.log(`  ratio backend / bare:  ${(p / b).toFixed(2)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  reportLibvirtProvisioning(Number(values.runs)).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
