// A small HTTP client for a node's API, lossless both ways (bigint-safe JSON). Used by the CLI,
// by the provider agent talking to peers' HTTP endpoints, and by tests and benchmarks.
import { parseJson, stringifyJson, type JsonValue } from '../../ledger/codec/json.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed body (lossless), or null for an empty or non-JSON body. */
  body: JsonValue;
  text: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export class NodeClient {
  constructor(
    readonly baseUrl: string,
    private readonly opts: { adminToken?: string; timeoutMs?: number } = {},
  ) {}

  async request(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const h: Record<string, string> = { ...headers };
    if (this.opts.adminToken) h.authorization = `Bearer ${this.opts.adminToken}`;
    let payload: string | undefined;
    if (body !== undefined) {
      h['content-type'] = 'application/json';
      payload = typeof body === 'string' ? body : stringifyJson(body);
    }
    const res = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: h,
      body: payload,
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let parsed: JsonValue = null;
    if (text.trim() !== '') {
      try {
        parsed = parseJson(text);
      } catch {
        parsed = null;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  /** GET expecting 2xx; throws ApiError with the node's `error` message otherwise. */
  async get(path: string): Promise<JsonValue> {
    return unwrap(await this.request('GET', path));
  }

  /** POST expecting 2xx; throws ApiError with the node's `error` message otherwise. */
  async post(path: string, body: unknown, headers?: Record<string, string>): Promise<JsonValue> {
    return unwrap(await this.request('POST', path, body, headers));
  }
}

function unwrap(res: ApiResponse): JsonValue {
  if (res.status >= 200 && res.status < 300) return res.body;
  const body = res.body as { error?: unknown; retryable?: unknown } | null;
  const message = typeof body?.error === 'string' ? body.error : `HTTP ${res.status}`;
  const retryable = body?.retryable === true || res.status === 503 || res.status === 429;
  throw new ApiError(res.status, message, retryable);
}
