// The libvirt base image: a Debian root filesystem as qcow2 plus its kernel and initrd for direct
// kernel boot. Files are named by a content hash of the recipe (build script text + inputs), so a
// changed recipe builds a new image and CI can cache the directory keyed by that hash.

import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const DEFAULT_LIBVIRT_IMAGE_DIR = '/var/lib/netnode/images';

/** Packages on top of debootstrap's minbase (provider.md §5.1 userland, a kernel and its initrd). */
const PACKAGES = [
  'openssh-server', 'bash', 'procps', 'iproute2', 'sudo', 'util-linux', 'e2fsprogs', 'tini',
  'initramfs-tools', 'linux-image-cloud-amd64',
];

export interface LibvirtImageOptions {
  /** Directory holding the built images (a setting; must be readable by the QEMU user). */
  dir: string;
  mirror?: string;
  suite?: string;
  /** Size of the root filesystem in the base image; each VM's overlay grows it to `disk_gb`. */
  rootSize?: string;
}

export interface LibvirtImage {
  /** `netvm-<16 hex>`: the recipe's content hash. */
  id: string;
  qcow2: string;
  kernel: string;
  initrd: string;
}

// Beside this module in the source tree; from the compiled `dist/` tree, back in the source tree.
const HERE = dirname(fileURLToPath(import.meta.url));
const BUILD_SCRIPT = [join(HERE, 'build-qcow2.sh'), join(HERE, '../../../provisioning/images/build-qcow2.sh')]
  .find((p) => existsSync(p)) ?? join(HERE, 'build-qcow2.sh');

function recipe(opts: LibvirtImageOptions) {
  return {
    mirror: opts.mirror ?? 'http://deb.debian.org/debian',
    suite: opts.suite ?? 'bookworm',
    rootSize: opts.rootSize ?? '2G',
    packages: PACKAGES.join(','),
  };
}

/** Where the image for these options lives (whether or not it has been built). */
export function libvirtImage(opts: LibvirtImageOptions): LibvirtImage {
  const r = recipe(opts);
  const hash = createHash('sha256')
    .update(readScript())
    .update(`\0${r.mirror}\0${r.suite}\0${r.rootSize}\0${r.packages}`)
    .digest('hex');
  const id = `netvm-${hash.slice(0, 16)}`;
  return {
    id,
    qcow2: join(opts.dir, `${id}.qcow2`),
    kernel: join(opts.dir, `${id}.vmlinuz`),
    initrd: join(opts.dir, `${id}.initrd`),
  };
}

export function libvirtImagePresent(image: LibvirtImage): boolean {
  return existsSync(image.qcow2) && existsSync(image.kernel) && existsSync(image.initrd);
}

/**
 * Builds the image unless it already exists (idempotent). Needs root (debootstrap, chroot).
 * `progress` receives the build's progress lines.
 */
export async function buildLibvirtImage(
  opts: LibvirtImageOptions,
  progress: (line: string) => void,
): Promise<LibvirtImage & { built: boolean }> {
  const image = libvirtImage(opts);
  if (libvirtImagePresent(image)) return { ...image, built: false };
  const r = recipe(opts);
  mkdirSync(opts.dir, { recursive: true, mode: 0o755 });
  const work = join(opts.dir, `.build-${image.id}-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { mode: 0o700 });
  try {
    await runScript(
      [work, r.mirror, r.suite, r.packages, r.rootSize, image.qcow2, image.kernel, image.initrd],
      progress,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!libvirtImagePresent(image)) throw new Error(`libvirt image build produced no ${image.qcow2}`);
  return { ...image, built: true };
}

function readScript(): Buffer {
  return readFileSync(BUILD_SCRIPT);
}

function runScript(args: string[], progress: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      if (line.startsWith('progress: ')) progress(line.slice('progress: '.length));
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`libvirt image build failed (exit ${code}):\n${tail.join('\n')}`));
    });
  });
}
