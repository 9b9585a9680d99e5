// VM routes (api.md §8): `GET /vms`, `GET /vms/{leaseHash}` and the TCP tunnel entry. The
// provisioning and gateway parts inject their handlers through `VmHandlers`; without them the node
// has no VMs and answers as a node whose provider cannot be reached.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLowerHex } from '../../ledger/codec/hex.js';
import { verifyHashSignature } from '../../ledger/crypto/ed25519.js';
import type { LedgerService } from '../../ledger/service.js';
import type { Lease } from '../../ledger/types.js';
import { HttpError, hexPathParam, sendJson } from './http.js';
import type { Route } from './route.js';

export type RouteHandler = Route['handler'];

/** Handlers supplied by provisioning (`list`, `get`) and the gateway (`tunnel`). */
export interface VmHandlers {
  list?: RouteHandler;
  get?: RouteHandler;
  tunnel?: RouteHandler;
}

export interface VmRouteDeps {
  ledger: Pick<LedgerService, 'lease'>;
  /** This node's account address (the provider account in provider mode). */
  ownAddress: string;
  now: () => bigint;
  handlers: VmHandlers;
}

export interface TunnelGrant {
  lease: Lease;
  /** The verified `X-Signature` bytes, forwarded to the provider (provider.md §7.2). */
  signature: Uint8Array;
}

/** Checks 1–6 of api.md §8.3, in order; throws the documented HttpError. */
export function tunnelPreflight(request: FastifyRequest, ledger: Pick<LedgerService, 'lease'>, now: bigint): TunnelGrant {
  const leaseHash = hexPathParam(request, 'leaseHash', 'invalid lease hash');
  const lease = ledger.lease(leaseHash, now);
  if (!lease) throw new HttpError(404, 'lease not found');
  if (lease.state !== 'accepted') throw new HttpError(410, 'lease not active');
  if (lease.access_pub_key === '') throw new HttpError(403, 'lease has no access key');
  const header = request.headers['x-signature'];
  if (header === undefined) throw new HttpError(401, 'missing X-Signature header');
  const sig = Array.isArray(header) ? header[0]! : header;
  if (!isLowerHex(sig, 128) || !verifyHashSignature(lease.access_pub_key, leaseHash, sig)) {
    throw new HttpError(403, 'signature verification failed');
  }
  return { lease, signature: Buffer.from(sig, 'hex') };
}

export function vmRoutes({ ledger, ownAddress, now, handlers }: VmRouteDeps) {
  const list: Route = {
    method: 'GET',
    path: '/vms',
    description: 'VMs this node runs as provider or leased as consumer',
    handler: handlers.list ?? ((_request: FastifyRequest, reply: FastifyReply) => sendJson(reply, 200, [])),
  };

  const get: Route = {
    method: 'GET',
    path: '/vms/{leaseHash}',
    description: 'VM of a lease',
    handler:
      handlers.get ??
      ((request: FastifyRequest) => {
        const lease = ledger.lease(hexPathParam(request, 'leaseHash', 'invalid lease hash'), now());
        if (!lease) throw new HttpError(404, 'lease not found');
        // No local VMs; a lease of another provider would be relayed, and no peer is reachable.
        if (lease.provider === ownAddress) throw new HttpError(404, 'vm not found');
        throw new HttpError(502, 'vm relay error: provider peer not found');
      }),
  };

  const tunnel: Route = {
    method: 'POST',
    path: '/tunnel/{leaseHash}/tcp',
    description: 'Raw TCP tunnel to a leased VM',
    body: 'none',
    handler:
      handlers.tunnel ??
      ((request: FastifyRequest) => {
        const { lease } = tunnelPreflight(request, ledger, now());
        throw new HttpError(502, lease.provider === ownAddress ? 'tunnel error: vm not found' : 'tunnel error: provider peer not found');
      }),
  };

  return { list, get, tunnel };
}
