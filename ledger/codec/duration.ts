// Signed duration strings (ledger.md §11.1), the format of Go's time.Duration.String().

const NS_PER_US = 1_000n;
const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/** `whole[.fraction]` of value/unit with up to `digits` fractional digits, trailing zeros removed. */
function decimal(value: bigint, unit: bigint, digits: number): string {
  const whole = value / unit;
  const frac = value % unit;
  if (frac === 0n) return whole.toString();
  return `${whole}.${frac.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}

export function formatDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const mag = ns < 0n ? -ns : ns;
  if (mag < NS_PER_US) return `${sign}${mag}ns`;
  if (mag < NS_PER_MS) return `${sign}${decimal(mag, NS_PER_US, 3)}µs`;
  if (mag < NS_PER_S) return `${sign}${decimal(mag, NS_PER_MS, 6)}ms`;
  const totalSeconds = mag / NS_PER_S;
  const hours = totalSeconds / 3600n;
  const minutes = (totalSeconds / 60n) % 60n;
  const seconds = decimal(mag % (60n * NS_PER_S), NS_PER_S, 9);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
