// Chat routes (api.md §11, chat-and-directory.md §4–§7).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChatService } from '../chat/service.js';
import type { ChatStore } from '../chat/store.js';
import type { KeyLookup, ReadAuth, ReadProof } from '../chat/read-auth.js';
import type { ChatEventHub } from '../chat/events.js';
import { ChatError } from '../chat/errors.js';
import { envelopeToJson } from '../chat/envelope.js';
import { adminCheck } from './auth.js';
import { clientKey } from './client-key.js';
import { disableTimeouts, HttpError, intQuery, pageLimit, pageOffset, queryParam, sendJson } from './http.js';
import type { Route } from './route.js';

export interface ChatRouteDeps {
  chat: ChatService;
  store: ChatStore;
  readAuth: ReadAuth;
  /** Address → key bindings for proofs without `pub_key` (chat-and-directory.md §5.4). */
  keys: KeyLookup;
  events: ChatEventHub;
  /** NET_API_ADMIN_TOKEN, or null when not configured. */
  adminToken: string | null;
}

function toHttp(err: unknown): unknown {
  if (!(err instanceof ChatError)) return err;
  return new HttpError(err.status, err.message, err.retryAfter === undefined ? {} : { 'Retry-After': String(err.retryAfter) });
}

/** Run `fn`, answering a ChatError as its HttpError. */
async function chatCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toHttp(err);
  }
}

function readProof(request: FastifyRequest): ReadProof {
  return {
    account: queryParam(request, 'account') ?? '',
    challenge: queryParam(request, 'challenge') ?? '',
    sig: queryParam(request, 'sig') ?? '',
    pub_key: queryParam(request, 'pub_key') ?? '',
  };
}

export function chatRoutes(deps: ChatRouteDeps): Route[] {
  const { chat, store, readAuth, keys, events } = deps;

  const verifyProof = (request: FastifyRequest): string => {
    const proof = readProof(request);
    readAuth.verifyChatReadProof(proof, keys);
    return proof.account;
  };

  const offsetPage = <T>(request: FastifyRequest, items: T[]): T[] => {
    const offset = pageOffset(request);
    return items.slice(offset, offset + pageLimit(request));
  };

  return [
    {
      method: 'POST',
      path: '/chat/send',
      description: 'Send a pre-signed chat envelope',
      handler: async (request) => {
        const id = await chatCall(() => chat.send(request.body as never));
        return { ok: true, id };
      },
    },
    {
      method: 'GET',
      path: '/chat/auth/challenge',
      description: 'Issue a chat read challenge',
      handler: () => chatCall(() => readAuth.issue()),
    },
    {
      method: 'GET',
      path: '/chat/messages',
      description: 'Chat messages of an account (ownership proof)',
      handler: async (request) => {
        const account = await chatCall(() => verifyProof(request));
        return store.messages(account, intQuery(request, 'since') ?? 0n).map(envelopeToJson);
      },
    },
    {
      method: 'GET',
      path: '/chat/contacts',
      description: 'Accounts with stored chat messages',
      handler: async (request) => {
        if (queryParam(request, 'account') === undefined) return offsetPage(request, store.accounts());
        const account = await chatCall(() => verifyProof(request));
        return offsetPage(request, store.counterparties(account));
      },
    },
    {
      method: 'GET',
      path: '/chat/events',
      description: 'Chat event stream (SSE)',
      handler: (request, reply) => openEventStream(request, reply, deps, verifyProof),
    },
  ];
}

/** chat-and-directory.md §7: streaming check, caps, admin or proof, then the stream. */
async function openEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ChatRouteDeps,
  verifyProof: (request: FastifyRequest) => string,
): Promise<FastifyReply> {
  const raw = reply.raw;
  if (typeof raw.flushHeaders !== 'function' || typeof raw.write !== 'function') {
    return sendJson(reply, 500, { error: 'streaming not supported' });
  }
  const key = clientKey(request);
  let account: string | null = null;
  await chatCall(() => {
    deps.events.checkCapacity(key);
    if (queryParam(request, 'account') === undefined) adminCheck(request, deps.adminToken);
    else account = verifyProof(request);
  });
  disableTimeouts(request);
  reply.hijack();
  // Headers set on the reply so far (CORS) go out with the stream's own.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value);
  raw.writeHead(200, {
    ...headers,
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  deps.events.subscribe(raw, key, account);
  return reply;
}
