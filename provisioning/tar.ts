// A minimal ustar writer: enough to hand a few small credential files to a created container
// (on its stdin at first boot) without passing secrets through environment variables or command lines.

export interface TarEntry {
  path: string;
  /** Directories have no content. */
  content?: string;
  mode: number;
  uid?: number;
  gid?: number;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(entry: TarEntry, size: number, isDir: boolean): Buffer {
  const h = Buffer.alloc(BLOCK);
  const name = isDir && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  if (Buffer.byteLength(name) > 100) throw new Error(`tar path too long: ${name}`);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(entry.mode, 8), 100, 8, 'ascii');
  h.write(octal(entry.uid ?? 0, 8), 108, 8, 'ascii');
  h.write(octal(entry.gid ?? 0, 8), 116, 8, 'ascii');
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(Math.floor(Date.now() / 1000), 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii');
  h.write(isDir ? '5' : '0', 156, 1, 'ascii');
  h.write('ustar\u000000', 257, 8, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

export function tarArchive(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const isDir = entry.content === undefined;
    const body = Buffer.from(entry.content ?? '', 'utf8');
    parts.push(header(entry, body.length, isDir));
    if (body.length > 0) {
      parts.push(body, Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK));
    }
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
