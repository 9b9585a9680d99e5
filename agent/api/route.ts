// One entry of the node's route table (api.md §3). Each API area exports a function returning its
// entries; `routes.ts` concatenates them in manifest order, and both the router and `GET /` are
// built from that single list.

import type { FastifyReply, FastifyRequest } from 'fastify';

export type HttpMethod = 'GET' | 'POST';

export interface Route {
  method: HttpMethod;
  /** Literal pattern as the manifest shows it, e.g. `/accounts/{address}/balance`. */
  path: string;
  /** Informative text for the manifest. */
  description: string;
  handler: (request: FastifyRequest, reply: FastifyReply) => unknown;
  /**
   * `'required'`: the server checks the admin bearer token (api.md §2) before the content type and
   * the body (api.md §7.4 order).
   */
  admin?: 'required';
  /**
   * POST routes read a JSON body by default: the server answers 415/400 before the handler runs and
   * the handler reads `request.body` (the parsed value) or `bodyText(request)`. `'none'`: the route
   * reads no body and no content type is required (`POST /tunnel/{leaseHash}/tcp`).
   */
  body?: 'none';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The route the API pipeline matched (server.ts); null until matched. */
    apiRoute: Route | null;
    /** The body text of a POST as read (server.ts); '' when none. Handlers use `bodyText`/`jsonBody`. */
    apiBodyText: string;
  }
}

/** Rate-limit class of a request (api.md §14). */
export type RateClass = 'read' | 'write' | 'probe';

export function rateClassOf(method: string, path: string): RateClass {
  if (method === 'POST') return 'write';
  return path === '/health' || path === '/ready' ? 'probe' : 'read';
}
