// Summary statistics and process measurements shared by the benchmarks.

import { readFileSync } from 'node:fs';

/** The middle value (the mean of the two middle values for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * CPU seconds (user + system) a process has used, or one of its threads when `tid` is given, from
 * /proc (fields 14 and 15 of stat, in clock ticks of 1/100 s).
 */
export function cpuSeconds(pid: number, tid?: number): number {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
