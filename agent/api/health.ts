// `GET /health` and `GET /ready` (api.md §6.7): 200 or 503 with the same document.

import type { FastifyReply } from 'fastify';
import type { NodeStatus, ProbeResult } from '../status.js';
import { sendJson } from './http.js';
import type { Route } from './route.js';

function sendProbe(reply: FastifyReply, result: ProbeResult): FastifyReply {
  reply.headers(result.headers);
  return sendJson(reply, result.ok ? 200 : 503, result.document);
}

export function healthRoutes(status: NodeStatus) {
  const health: Route = {
    method: 'GET',
    path: '/health',
    description: 'Liveness of the process',
    handler: (_request, reply) => sendProbe(reply, status.health()),
  };
  const ready: Route = {
    method: 'GET',
    path: '/ready',
    description: 'Readiness: synced, peered, weight present, finality advancing',
    handler: (_request, reply) => sendProbe(reply, status.ready()),
  };
  return { health, ready };
}
