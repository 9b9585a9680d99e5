// `sys.timekeepers` (leases.md §5.1) as read from the state chain tip.
import { isJsonObject, parseJson } from '../../ledger/codec/json.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import type { StatechainService } from '../../ledger/service.js';
import type { Keyset } from '../../ledger/types.js';

/** The configured timekeepers, or null when absent, malformed or with threshold 0. */
export function currentTimekeepers(statechain: Pick<StatechainService, 'get'>): Keyset | null {
  const text = statechain.get('sys.timekeepers');
  if (text === null) return null;
  let value;
  try {
    value = parseJson(text);
  } catch {
    return null;
  }
  if (!isJsonObject(value)) return null;
  const keys = value['keys'];
  const threshold = value['threshold'];
  if (!Array.isArray(keys) || typeof threshold !== 'bigint' || threshold <= 0n) return null;
  const hexKeys = keys.filter((k): k is string => isLowerHex(k, 64));
  return { keys: hexKeys, threshold: Number(threshold) };
}
