// Reply and request helpers shared by every API area: JSON out through the project codec, typed
// HTTP errors with the exact client-facing messages, parameter parsing (api.md §1, §12).

import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseJson, stringifyJson, type JsonValue, type ParseOptions } from '../../ledger/codec/json.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { I64_MAX, I64_MIN } from '../../ledger/codec/bytes.js';

/** An error answered as `{"error": message}` with `status`. Throw it from any handler. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
    /** Explicit `retryable`; otherwise derived from the status on block submission routes. */
    readonly retryable?: boolean,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const INVALID_BODY = 'invalid request body';
export const MAX_BODY_BYTES = 1_048_576;
export const JSON_CONTENT_TYPE = 'application/json';

/**
 * True for the routes whose every non-2xx answer carries `retryable` (api.md §1): `POST /blocks/*`
 * and `POST /statechain/blocks`.
 */
export function carriesRetryable(method: string, url: string): boolean {
  if (method !== 'POST') return false;
  const path = pathOf(url);
  return path.startsWith('/blocks/') || path === '/statechain/blocks';
}

/** The path part of a request target, exactly as sent (no decoding, no cleaning). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Compact JSON plus `\n` (api.md §1). Sent as bytes so the content type stays exactly application/json. */
export function sendJson(reply: FastifyReply, status: number, value: unknown): FastifyReply {
  return reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(Buffer.from(stringifyJson(value) + '\n'));
}

/** Already-encoded JSON text (e.g. a state chain value as stored) plus `\n`. */
export function sendJsonText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(Buffer.from(text + '\n'));
}

/**
 * `{"error": message}`; adds `retryable` on block submission routes (true exactly for 429 and 503
 * unless given) and `Retry-After: 1` on a 503/429 that has none (api.md §1).
 */
export function sendError(
  reply: FastifyReply,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  retryable?: boolean,
): FastifyReply {
  const req = reply.request;
  const body: { error: string; retryable?: boolean } = { error: message };
  if (carriesRetryable(req.method, req.url)) body.retryable = retryable ?? (status === 429 || status === 503);
  if ((status === 503 || status === 429) && headers['Retry-After'] === undefined) reply.header('Retry-After', '1');
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return sendJson(reply, status, body);
}

/** Answer a thrown HttpError. */
export function sendHttpError(reply: FastifyReply, err: HttpError): FastifyReply {
  return sendError(reply, err.status, err.message, err.headers, err.retryable);
}

/**
 * A JSON document written piece by piece (api.md §1: large complete collections are streamed,
 * never built whole). `chunks` yields already-encoded JSON text.
 */
export function sendJsonStream(reply: FastifyReply, chunks: Iterable<string> | AsyncIterable<string>): FastifyReply {
  async function* withNewline(): AsyncGenerator<string> {
    for await (const c of chunks) yield c;
    yield '\n';
  }
  return reply.code(200).header('content-type', JSON_CONTENT_TYPE).send(Readable.from(withNewline(), { objectMode: false }));
}

/** `[`item,item,…`]` from pages of items, each item encoded with the project codec. */
export function* jsonArrayChunks<T>(pages: Iterable<T[]>, encode: (item: T) => string = stringifyJson): Generator<string> {
  yield '[';
  let first = true;
  for (const page of pages) {
    if (page.length === 0) continue;
    let s = '';
    for (const item of page) {
      s += (first ? '' : ',') + encode(item);
      first = false;
    }
    yield s;
  }
  yield ']';
}

/** `prefix`, then the chunks, then `suffix`, lazily. */
export function* wrapChunks(prefix: string, chunks: Iterable<string>, suffix: string): Generator<string> {
  yield prefix;
  yield* chunks;
  yield suffix;
}

/** Pages of `pageSize` from an offset-paged source, stopping at the first short page. */
export function* pagesOf<T>(fetch: (offset: number, limit: number) => T[], pageSize = 1000): Generator<T[]> {
  for (let offset = 0; ; offset += pageSize) {
    const page = fetch(offset, pageSize);
    yield page;
    if (page.length < pageSize) return;
  }
}

// -------------------------------------------------------------------------------------------
// Bodies

/** The raw body text of a POST (empty when none). */
export function bodyText(request: FastifyRequest): string {
  return request.apiBodyText ?? '';
}

/** `415` unless the media type is application/json (case-insensitive, parameters allowed). */
export function requireJsonContentType(request: FastifyRequest): void {
  const ct = request.headers['content-type'];
  const media = typeof ct === 'string' ? ct.split(';', 1)[0]!.trim().toLowerCase() : '';
  if (media !== JSON_CONTENT_TYPE) throw new HttpError(415, 'content type must be application/json');
}

/**
 * The body's first JSON value, parsed by the project codec (integers as bigint). Empty, malformed
 * or over-cap bodies → `400 invalid request body`.
 */
export function jsonBody(request: FastifyRequest, options: Omit<ParseOptions, 'allowTrailing'> = {}): JsonValue {
  const text = bodyText(request);
  if (text.trim() === '') throw new HttpError(400, INVALID_BODY);
  try {
    return parseJson(text, { ...options, allowTrailing: true });
  } catch {
    throw new HttpError(400, INVALID_BODY);
  }
}

// -------------------------------------------------------------------------------------------
// Parameters

/** A named path parameter of the matched pattern (percent-decoded). */
export function pathParam(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}

/** A 64-lowercase-hex path parameter, else `400 <message>` (api.md §1: validated first). */
export function hexPathParam(request: FastifyRequest, name: string, message: string): string {
  const v = pathParam(request, name);
  if (!isLowerHex(v, 64)) throw new HttpError(400, message);
  return v;
}

/** A single query parameter (first occurrence), or undefined. */
export function queryParam(request: FastifyRequest, name: string): string | undefined {
  const query = (request.query ?? {}) as Record<string, string | string[] | undefined>;
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
}

/** An integer query parameter; absent or not an integer → undefined (callers apply defaults). */
export function intQuery(request: FastifyRequest, name: string): bigint | undefined {
  const v = queryParam(request, name);
  if (v === undefined || !/^-?[0-9]{1,19}$/.test(v)) return undefined;
  const n = BigInt(v);
  return n >= I64_MIN && n <= I64_MAX ? n : undefined;
}

export const PAGE_MAX = 1000;

/** `limit` per api.md §12: default and maximum 1000; non-integer or ≤ 0 → 1000. */
export function pageLimit(request: FastifyRequest, dflt = PAGE_MAX, max = PAGE_MAX): number {
  const n = intQuery(request, 'limit');
  if (n === undefined || n <= 0n) return dflt;
  return n > BigInt(max) ? max : Number(n);
}

/** `offset` per api.md §12: default 0; non-integer or negative → 0. */
export function pageOffset(request: FastifyRequest): number {
  const n = intQuery(request, 'offset');
  if (n === undefined || n < 0n) return 0;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** Offset paging requested on a complete collection: `offset` or `limit` present (api.md §12). */
export function pagingRequested(request: FastifyRequest): boolean {
  return hasQuery(request, 'offset') || hasQuery(request, 'limit');
}

/** Whether the request named a query parameter at all. */
export function hasQuery(request: FastifyRequest, name: string): boolean {
  return queryParam(request, name) !== undefined;
}

/**
 * Key-cursor `after` (api.md §12): absent → undefined; present but not of the listing's key shape →
 * `400 invalid after`.
 */
export function afterParam(request: FastifyRequest, valid: (s: string) => boolean): string | undefined {
  const v = queryParam(request, 'after');
  if (v === undefined) return undefined;
  if (!valid(v)) throw new HttpError(400, 'invalid after');
  return v;
}

/** Answer a key-cursor page as an object, with `X-Next-After` when more keys follow. */
export function sendKeyPage(reply: FastifyReply, entries: [string, unknown][], nextAfter: string | undefined): FastifyReply {
  if (nextAfter !== undefined) reply.header('X-Next-After', nextAfter);
  let s = '{';
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i]!;
    s += (i === 0 ? '' : ',') + JSON.stringify(k) + ':' + stringifyJson(v);
  }
  return sendJsonText(reply, 200, s + '}');
}

/** Streaming responses (SSE, tunnel) must not be cut by the server's write timeout (api.md §1). */
export function disableTimeouts(request: FastifyRequest): void {
  request.raw.socket.setTimeout(0);
}

/** Current time in Unix nanoseconds. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
