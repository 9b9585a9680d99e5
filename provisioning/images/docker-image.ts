// Base image of the Docker backend: a Debian root filesystem built by debootstrap from Debian's
// archive alone (build-rootfs.sh), imported with `docker import`. The tag is a content hash of the
// recipe (script text, suite, package list, image config), so an unchanged recipe reuses the
// existing image (or a cached rootfs tarball) and a changed one builds a new image.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';

export const DEFAULT_DOCKER_IMAGE_NAME = 'netnode-vm';
export const DEFAULT_DEBIAN_MIRROR = 'http://deb.debian.org/debian';

const IMAGE_PACKAGES = [
  'openssh-server', 'openssh-sftp-server', 'bash', 'procps', 'iproute2', 'sudo', 'util-linux',
  'passwd', 'ca-certificates', 'curl', 'netbase',
];

const IMAGE_CHANGES = ['ENTRYPOINT ["/usr/local/sbin/netvm-init"]', 'EXPOSE 22'];

export interface DockerImageSettings {
  /** Repository name; the tag is always the recipe hash. */
  name: string;
  suite: string;
  mirror: string;
  packages: readonly string[];
  /** Where rootfs tarballs are kept between builds (CI caches this directory). */
  cacheDir: string;
}

export function dockerImageSettings(overrides: Partial<DockerImageSettings> = {}): DockerImageSettings {
  return {
    name: DEFAULT_DOCKER_IMAGE_NAME,
    suite: 'bookworm',
    mirror: configuredDebianMirror(),
    packages: IMAGE_PACKAGES,
    cacheDir: join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'netnode', 'images'),
    ...overrides,
  };
}

/** The Debian mirror apt is configured with (deb822 or one-line format), else deb.debian.org. */
export function configuredDebianMirror(): string {
  const files = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const deb822 = /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text);
    if (deb822) return deb822[1]!;
    const oneLine = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(text);
    if (oneLine) return oneLine[1]!;
  }
  return DEFAULT_DEBIAN_MIRROR;
}

/** Finds build-rootfs.sh next to this module, or in the source tree when running from dist/. */
export function buildScriptPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  const sibling = join(dir, 'build-rootfs.sh');
  if (existsSync(sibling)) return sibling;
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'provisioning', 'images', 'build-rootfs.sh');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('provisioning/images/build-rootfs.sh not found');
}

/** Hash of everything that determines the image's content (the mirror does not). */
export function recipeHash(settings: DockerImageSettings): string {
  const h = createHash('sha256');
  h.update(readFileSync(buildScriptPath()));
  h.update(`\0${settings.suite}\0${[...settings.packages].join(',')}\0${IMAGE_CHANGES.join('\n')}`);
  return h.digest('hex');
}

/** `<name>:<first 12 hex of the recipe hash>` — what the backend runs. */
export function dockerImageRef(settings: DockerImageSettings): string {
  return `${settings.name}:${recipeHash(settings).slice(0, 12)}`;
}

export async function dockerImageExists(docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

export type Progress = (line: string) => void;

function runStreaming(cmd: string, args: string[], progress: Progress): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const forward = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') progress(line);
    };
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with code ${code}`))));
  });
}

async function buildRootfsTarball(settings: DockerImageSettings, tarball: string, progress: Progress): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'netnode-rootfs-'));
  try {
    const rootfs = join(work, 'rootfs');
    await runStreaming('bash', [buildScriptPath(), rootfs, settings.mirror, settings.suite, settings.packages.join(',')], progress);
    progress(`progress: packing ${tarball}`);
    await mkdir(dirname(tarball), { recursive: true });
    const partial = `${tarball}.partial`;
    await runStreaming('tar', ['--numeric-owner', '-C', rootfs, '-cf', partial, '.'], progress);
    await rename(partial, tarball);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function importTarball(docker: Docker, settings: DockerImageSettings, ref: string, tarball: string, progress: Progress): Promise<void> {
  const [repo, tag] = [ref.slice(0, ref.lastIndexOf(':')), ref.slice(ref.lastIndexOf(':') + 1)];
  progress(`progress: docker import ${tarball} as ${ref}`);
  const stream = await docker.importImage(createReadStream(tarball) as unknown as string, {
    repo,
    tag,
    changes: [...IMAGE_CHANGES, `LABEL net.recipe=${recipeHash(settings)}`],
  } as object);
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()));
  });
  if (!(await dockerImageExists(docker, ref))) throw new Error(`docker import did not produce ${ref}`);
}

function tarballPrefix(settings: DockerImageSettings): string {
  return `${settings.name.replace(/[^A-Za-z0-9._-]/g, '_')}-`;
}

/** Keeps the cache at one tarball per image name: older recipes' rootfs tarballs are deleted. */
async function pruneStaleTarballs(settings: DockerImageSettings, current: string, progress: Progress): Promise<void> {
  const prefix = tarballPrefix(settings);
  for (const file of await readdir(settings.cacheDir)) {
    if (file.startsWith(prefix) && /^[0-9a-f]{64}\.tar$/.test(file.slice(prefix.length)) && join(settings.cacheDir, file) !== current) {
      progress(`progress: removing stale cached rootfs ${file}`);
      await rm(join(settings.cacheDir, file), { force: true });
    }
  }
}

export interface ImageBuildResult {
  ref: string;
  /** `existing` image reused, `cache` imported from a cached tarball, `built` by debootstrap. */
  source: 'existing' | 'cache' | 'built';
}

/** Ensures the image for `settings` exists; idempotent. */
export async function buildDockerImage(docker: Docker, settings: DockerImageSettings, progress: Progress): Promise<ImageBuildResult> {
  const ref = dockerImageRef(settings);
  if (await dockerImageExists(docker, ref)) {
    progress(`progress: image ${ref} is up to date`);
    return { ref, source: 'existing' };
  }
  const tarball = join(settings.cacheDir, `${tarballPrefix(settings)}${recipeHash(settings)}.tar`);
  let source: ImageBuildResult['source'] = 'cache';
  if (existsSync(tarball)) {
    progress(`progress: reusing cached rootfs ${tarball}`);
  } else {
    source = 'built';
    await buildRootfsTarball(settings, tarball, progress);
  }
  await importTarball(docker, settings, ref, tarball, progress);
  await pruneStaleTarballs(settings, tarball, progress);
  progress(`progress: image ${ref} ready`);
  return { ref, source };
}
