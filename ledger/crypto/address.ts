// Single-key account address (ledger.md §2): sha256("net/account/v1" ‖ raw public key).
import { hash } from 'node:crypto';

const ACCOUNT_TAG = Buffer.from('net/account/v1', 'ascii');

export function accountAddress(publicKeyHex: string): string {
  return hash('sha256', Buffer.concat([ACCOUNT_TAG, Buffer.from(publicKeyHex, 'hex')]), 'hex');
}
