// The Docker base image is tagged by a hash of its recipe: same recipe → same tag (CI reuses the
// image or its cached rootfs tarball), any change in script, suite or packages → a new tag.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildScriptPath, dockerImageRef, dockerImageSettings, recipeHash } from '../../provisioning/images/docker-image.js';

describe('docker image recipe hash', () => {
  const base = dockerImageSettings({ cacheDir: '/nonexistent' });

  it('tags <name>:<12 hex of the recipe hash>, independent of mirror and cache location', () => {
    expect(dockerImageRef(base)).toMatch(/^netnode-vm:[0-9a-f]{12}$/);
    expect(dockerImageRef(base)).toBe(`netnode-vm:${recipeHash(base).slice(0, 12)}`);
    const elsewhere = dockerImageSettings({ mirror: 'http://mirror.example/debian', cacheDir: '/tmp/x' });
    expect(recipeHash(elsewhere)).toBe(recipeHash(base));
    expect(dockerImageRef(dockerImageSettings({ name: 'my/vm' }))).toBe(`my/vm:${recipeHash(base).slice(0, 12)}`);
  });

  it('changes with the package list or the suite', () => {
    expect(recipeHash({ ...base, packages: [...base.packages, 'vim'] })).not.toBe(recipeHash(base));
    expect(recipeHash({ ...base, suite: 'trixie' })).not.toBe(recipeHash(base));
  });

  it('covers the build script and the minimal package set sshd, sudo and job runners need', () => {
    expect(readFileSync(buildScriptPath(), 'utf8')).toContain('debootstrap --variant=minbase');
    for (const p of ['openssh-server', 'openssh-sftp-server', 'bash', 'sudo', 'util-linux', 'procps']) {
      expect(base.packages).toContain(p);
    }
  });
});
