// `virsh` for what the @unraid/libvirt bindings lack (networks); `qemu-img` for overlays.

import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function tool(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => reject(new Error(`${binary}: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${binary} ${args.find((a) => !a.startsWith('-')) ?? ''}: ${stderr.trim() || `exit ${code}`}`));
    });
  });
}

export function virsh(uri: string, args: string[]): Promise<string> {
  return tool('virsh', ['-q', '-c', uri, ...args]);
}

/** `virsh <command> <file>` with `xml` in a private temporary file (virsh cannot read a pipe). */
export async function virshWithXml(uri: string, command: string, xml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'netvm-'));
  try {
    const file = join(dir, 'object.xml');
    await writeFile(file, xml, { mode: 0o600 });
    return await virsh(uri, [command, file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function qemuImg(args: string[]): Promise<string> {
  return tool('qemu-img', args);
}

/** True when libvirt's message says the object does not exist (the bindings drop error codes). */
export function isNotFound(err: unknown): boolean {
  return /not found|no (domain|network) with matching/i.test((err as Error).message ?? '');
}
