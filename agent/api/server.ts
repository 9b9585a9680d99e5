// The public HTTP API server (api.md §1): one fastify instance whose single catch-all route runs the
// documented request pipeline — /pow guard, Host check, CORS preflight, rate limiter, router, the
// route's own checks — over the one route list of routes.ts.

import { fastify, LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { adminCheck } from './auth.js';
import { clientKey } from './client-key.js';
import { hostAllowlist } from './host-check.js';
import {
  HttpError,
  INVALID_BODY,
  MAX_BODY_BYTES,
  jsonBody,
  pathOf,
  requireJsonContentType,
  sendError,
  sendHttpError,
  sendJson,
} from './http.js';
import { RateLimiter } from './rate-limit.js';
import { coalesceWrites } from './write-coalescing.js';
import { onTakeover } from '../../gateway/tunnel/takeover.js';
import { rateClassOf, type Route } from './route.js';
import { Router } from './router.js';
import { SUBMITTABLE_TYPES } from '../../ledger/types.js';

export interface ApiServerOptions {
  routes: readonly Route[];
  logger: Logger;
  adminToken: string | null;
  /** `--api-bind`: allowed as a Host name unless it is a wildcard. */
  bind: string;
  allowedHosts: readonly string[] | '*';
  corsOrigin: string;
  rateLimit: boolean;
}

/** Timeouts of api.md §1. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const WRITE_TIMEOUT_MS = 60_000;
const KEEP_ALIVE_MS = 120_000;

export function buildApiServer(opts: ApiServerOptions): FastifyInstance {
  const app = fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Requests are not logged one by one (a failure is logged with its method and URL), so they
    // share the server's logger instead of each building a child logger.
    childLoggerFactory: (logger) => logger,
    bodyLimit: MAX_BODY_BYTES,
    exposeHeadRoutes: false,
    return503OnClosing: false,
    connectionTimeout: 0,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_MS,
    routerOptions: { maxParamLength: 65_536 },
    // A path fastify cannot percent-decode still goes through the pipeline (its parameter then
    // fails its shape check); such a request's body is never read.
    frameworkErrors: (_err, request, reply) => {
      if (!front(request, reply)) return;
      if (request.method === 'POST' && request.apiRoute?.body !== 'none') {
        sendError(reply, 400, INVALID_BODY);
        return;
      }
      dispatch(request, reply).catch((err: unknown) => onError(err, request, reply));
    },
  });
  app.decorateRequest('apiRoute', null);
  app.decorateRequest('apiBodyText', '');
  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
  app.server.on('connection', (socket: Socket) => {
    const release = coalesceWrites(socket);
    if (release) onTakeover(socket, release);
  });

  const router = new Router(opts.routes);
  const hostAllowed = hostAllowlist(opts.bind, opts.allowedHosts);
  const limiter = opts.rateLimit ? new RateLimiter() : null;
  const submittable = new Set<string>(SUBMITTABLE_TYPES);
  const cors = {
    'Access-Control-Allow-Origin': opts.corsOrigin,
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, X-Signature',
    'Access-Control-Expose-Headers': 'X-Next-After, Retry-After',
    'Access-Control-Max-Age': '3600',
  };

  // Bodies are read as text (capped); the handler step decides on content type and JSON.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => done(null, body));

  /** Steps 1–5 of api.md §1 plus the pre-body checks; answers and returns false to stop. */
  function front(request: FastifyRequest, reply: FastifyReply): boolean {
    reply.headers(cors);
    const path = pathOf(request.url);
    if (path === '/pow' || path.startsWith('/pow/')) {
      sendError(reply, 404, 'not found');
      return false;
    }
    if (!hostAllowed(request.headers.host)) {
      sendError(reply, 403, 'host not allowed');
      return false;
    }
    const method = request.method;
    if (method === 'OPTIONS') {
      reply.code(204).send();
      return false;
    }
    if (limiter) {
      const wait = limiter.take(rateClassOf(method, path), clientKey(request));
      if (wait > 0) {
        sendError(reply, 429, 'rate limit exceeded', { 'Retry-After': String(wait) });
        return false;
      }
    }
    const match = router.match(path);
    if (!match) {
      sendError(reply, 404, 'not found');
      return false;
    }
    const route = match.pattern.methods.get(method);
    if (!route) {
      if (method === 'POST' && match.pattern.path === '/blocks/{hash}' && !submittable.has(match.params.hash!)) {
        sendError(reply, 404, 'not found', {}, false);
      } else {
        reply.header('Allow', [...match.pattern.methods.keys()].join(', '));
        sendError(reply, 405, 'method not allowed');
      }
      return false;
    }
    request.params = match.params;
    request.apiRoute = route;
    if (method === 'POST' && route.body !== 'none') {
      try {
        if (route.admin === 'required') adminCheck(request, opts.adminToken);
        requireJsonContentType(request);
      } catch (err) {
        sendHttpError(reply, err as HttpError);
        return false;
      }
    }
    // Response write timeout; streaming handlers lift it (http.ts disableTimeouts). Armed once for
    // a run of pipelined requests: node refreshes it on every read and write, and re-arming it
    // costs a new timer per request.
    const socket = request.raw.socket;
    if (socket.timeout !== WRITE_TIMEOUT_MS) socket.setTimeout(WRITE_TIMEOUT_MS);
    return true;
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (front(request, reply)) done();
  });

  async function dispatch(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const route = request.apiRoute;
    if (!route) return sendError(reply, 404, 'not found');
    if (request.method === 'POST' && route.body !== 'none') {
      request.apiBodyText = typeof request.body === 'string' ? request.body : '';
      request.body = jsonBody(request);
    }
    const result = await route.handler(request, reply);
    if (result !== undefined && result !== reply && !reply.sent) return sendJson(reply, 200, result);
    return reply;
  }

  app.all('*', dispatch);
  app.setNotFoundHandler(dispatch);

  function onError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    reply.headers(cors);
    if (err instanceof HttpError) return sendHttpError(reply, err);
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) return sendError(reply, 400, INVALID_BODY);
    const status = (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) return sendError(reply, 400, INVALID_BODY);
    request.log.error({ err, method: request.method, url: request.url }, 'request failed');
    return sendError(reply, 500, 'internal error');
  }
  app.setErrorHandler(onError);

  app.addHook('onClose', () => limiter?.close());
  return app;
}
