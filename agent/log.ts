// The node's one logger (pino). JSON lines with `--log-json`; otherwise a compact human-readable
// line per record. Created once in the composition root and passed down.

import { createWriteStream } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

export type { Logger } from 'pino';

interface Sink {
  write(line: string): unknown;
}

const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

const OMITTED_KEYS = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** Rewrites pino's JSON lines (log records, not protocol data) as `time LEVEL msg key=value …`. */
function humanReadable(out: Sink): Sink {
  return {
    write(line: string) {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return out.write(line);
      }
      const time = new Date(Number(rec.time)).toISOString();
      const level = LEVEL_NAMES[Number(rec.level)] ?? String(rec.level);
      let text = `${time} ${level.padEnd(5)} ${String(rec.msg ?? '')}`;
      for (const [k, v] of Object.entries(rec)) {
        if (OMITTED_KEYS.has(k)) continue;
        text += ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
      }
      return out.write(text + '\n');
    },
  };
}

export function createLogger(options: Config['log']): Logger {
  const target: Sink = options.file ? createWriteStream(options.file, { flags: 'a' }) : process.stderr;
  return pino(
    { level: options.level, base: undefined },
    options.json ? (target as NodeJS.WritableStream) : (humanReadable(target) as NodeJS.WritableStream),
  );
}
