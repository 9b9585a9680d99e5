// Single-key account address (ledger.md §2): sha256("net/account/v1" ‖ raw public key).
import { createHash } from 'node:crypto';

const ACCOUNT_TAG = Buffer.from('net/account/v1', 'ascii');

export function accountAddress(publicKeyHex: string): string {
  return createHash('sha256').update(ACCOUNT_TAG).update(Buffer.from(publicKeyHex, 'hex')).digest('hex');
}
