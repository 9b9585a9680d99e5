// Amounts as people write them: decimal units with up to 6 places (1 XE = 1,000,000 micro-XE).
import { U64_MAX } from '../../ledger/codec/bytes.js';

const AMOUNT_RE = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/;

export function parseAmount(text: string): bigint {
  const m = AMOUNT_RE.exec(text.trim());
  if (!m) throw new Error(`invalid amount "${text}": use a decimal number with at most 6 places, e.g. 12.5`);
  const micro = BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
  if (micro > U64_MAX) throw new Error(`invalid amount "${text}": too large`);
  return micro;
}

export function formatAmount(micro: bigint): string {
  const sign = micro < 0n ? '-' : '';
  const abs = micro < 0n ? -micro : micro;
  const whole = abs / 1_000_000n;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/** Durations like `90`, `90s`, `5m`, `1h` → seconds. */
export function parseDurationSeconds(text: string): bigint {
  const m = /^([0-9]+)(s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration "${text}": use seconds or a unit, e.g. 300, 90s, 5m, 1h`);
  const unit = { s: 1n, m: 60n, h: 3600n, d: 86_400n }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return BigInt(m[1]!) * unit;
}
