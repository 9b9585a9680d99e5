// Typed ledger rejections (ledger.md §20). Retryability is a property of the code, never of the text.

export type LedgerErrorCode =
  | 'missing_dependency'
  | 'frontier'
  | 'conflict'
  | 'not_yet'
  | 'statechain_lag'
  | 'unknown_type'
  | 'storage'
  | 'pow'
  | 'invalid';

export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LedgerError';
  }

  /** Whether a client should retry; `pow` is retryable only on the sync path. */
  retryable(path: 'live' | 'sync' = 'live'): boolean {
    return isRetryable(this.code, path);
  }
}

export function isRetryable(code: LedgerErrorCode, path: 'live' | 'sync' = 'live'): boolean {
  switch (code) {
    case 'invalid':
      return false;
    case 'pow':
      return path === 'sync';
    default:
      return true;
  }
}

/** Shorthand for the common non-retryable rejection. */
export function invalid(message: string): LedgerError {
  return new LedgerError('invalid', message);
}
