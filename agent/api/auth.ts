// Admin bearer token (api.md §2): `Authorization: Bearer <token>` against NET_API_ADMIN_TOKEN,
// compared in constant time; never read from a query parameter or a cookie.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { HttpError } from './http.js';

export const ADMIN_DISABLED = 'operator endpoint disabled: no admin token configured (set NET_API_ADMIN_TOKEN)';
export const ADMIN_INVALID = 'invalid or missing admin token';

const BEARER = 'Bearer ';

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** Whether the request carries the configured token (false when none is configured). */
export function hasAdmin(request: FastifyRequest, token: string | null): boolean {
  if (token === null) return false;
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith(BEARER)) return false;
  // Equal-length digests make the comparison constant-time whatever the presented length.
  return timingSafeEqual(digest(header.slice(BEARER.length)), digest(token));
}

/**
 * For routes that require the token: throws `403` when no token is configured, `401` when the
 * header is missing or wrong. Returns normally when the request is authorized.
 */
export function adminCheck(request: FastifyRequest, token: string | null): void {
  if (token === null) throw new HttpError(403, ADMIN_DISABLED);
  if (!hasAdmin(request, token)) throw new HttpError(401, ADMIN_INVALID);
}
