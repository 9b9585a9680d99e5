// A chat failure with its client-facing status and exact message (chat-and-directory.md §4–§7).

export class ChatError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Whole seconds for `Retry-After` (every 429 and 503 carries one). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ChatError';
  }
}
