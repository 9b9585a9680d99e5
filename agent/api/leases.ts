// Lease reads and the operator's lease request (api.md §7.1, §7.4).

import { isJsonObject, type JsonValue } from '../../ledger/codec/json.js';
import { isLowerHex } from '../../ledger/codec/hex.js';
import type { LedgerService } from '../../ledger/service.js';
import { LEASE_STATES, type LeaseState } from '../../ledger/types.js';
import { HttpError, INVALID_BODY, hexPathParam, pageLimit, pageOffset, queryParam, sendJson } from './http.js';
import type { Route } from './route.js';
import { U64_MAX } from '../../ledger/codec/bytes.js';

export interface LeaseRequest {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** seconds */
  duration: bigint;
  access_pub_key: string;
  /** Only offers from this provider address are taken, when given. */
  provider?: string;
}

/** A lease request that failed; answered as `400 {"error": message}`. */
export class LeaseRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LeaseRequestError';
  }
}

/** Publishes a lease request, waits for an offer and submits the lease block (provider.md §3). */
export interface LeaseRequester {
  request(req: LeaseRequest): Promise<{ lease_hash: string }>;
}

export const OFFER_TIMEOUT_MS = 30_000;

/**
 * The requester of a node without peers (wave 1): no offer can come from elsewhere. When the node's
 * own account is the only possible provider the request fails at once; otherwise it waits the
 * documented 30 s for an offer that cannot arrive.
 */
export class PeerlessLeaseRequester implements LeaseRequester {
  constructor(
    private readonly ownAddress: string,
    private readonly providerMode: boolean,
    private readonly offerTimeoutMs = OFFER_TIMEOUT_MS,
  ) {}

  async request(req: LeaseRequest): Promise<{ lease_hash: string }> {
    const onlySelf = req.provider === this.ownAddress || (req.provider === undefined && this.providerMode);
    if (onlySelf) throw new LeaseRequestError('request lease: cannot lease to self');
    await new Promise((resolve) => setTimeout(resolve, this.offerTimeoutMs));
    throw new LeaseRequestError('request lease: no offer received within 30s');
  }
}

const MAX_DURATION_SECS = 31_536_000n;

function u64Field(body: Record<string, JsonValue>, name: string): bigint {
  const v = body[name];
  if (v === undefined || v === null) return 0n;
  if (typeof v !== 'bigint' || v < 0n || v > U64_MAX) throw new HttpError(400, INVALID_BODY);
  return v;
}

function optionalString(body: Record<string, JsonValue>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new HttpError(400, INVALID_BODY);
  return v;
}

/** Validate a lease request body (api.md §7.4, leases.md §1.1), in the documented order. */
export function parseLeaseRequest(body: JsonValue, minDurationSecs: bigint): LeaseRequest {
  if (!isJsonObject(body)) throw new HttpError(400, INVALID_BODY);
  const vcpus = u64Field(body, 'vcpus');
  const memory_mb = u64Field(body, 'memory_mb');
  const disk_gb = u64Field(body, 'disk_gb');
  const duration = u64Field(body, 'duration');
  const accessKey = optionalString(body, 'access_pub_key');
  const provider = optionalString(body, 'provider');
  if (provider !== undefined && !isLowerHex(provider, 64)) throw new HttpError(400, INVALID_BODY);

  const fail = (message: string): never => {
    throw new HttpError(400, message);
  };
  if (vcpus === 0n && memory_mb === 0n && disk_gb === 0n) fail('at least one resource required (vcpus, memory_mb, disk_gb)');
  if (duration === 0n) fail('duration required');
  if (vcpus > 4096n) fail(`lease vcpus must be <= 4096, got ${vcpus}`);
  if (memory_mb > 67_108_864n) fail(`lease memory_mb must be <= 67108864, got ${memory_mb}`);
  if (disk_gb > 1_048_576n) fail(`lease disk_gb must be <= 1048576, got ${disk_gb}`);
  if (duration < minDurationSecs) fail(`lease duration must be >= ${minDurationSecs} seconds`);
  if (duration > MAX_DURATION_SECS) fail(`lease duration must be <= ${MAX_DURATION_SECS} seconds`);
  if (accessKey === undefined || accessKey === '') fail('access_pub_key required');
  const key = accessKey!;
  if (!isLowerHex(key) || key.length % 2 !== 0) fail('access_pub_key must be 64 lowercase hex characters');
  if (key.length !== 64) fail(`access_pub_key must be 32 bytes, got ${key.length / 2}`);
  return { vcpus, memory_mb, disk_gb, duration, access_pub_key: key, ...(provider !== undefined ? { provider } : {}) };
}

export interface LeaseRouteDeps {
  ledger: LedgerService;
  requester: LeaseRequester;
  now: () => bigint;
}

const INVALID_STATE = `invalid state: must be one of ${LEASE_STATES.join(', ')}`;

export function leaseRoutes({ ledger, requester, now }: LeaseRouteDeps) {
  const list: Route = {
    method: 'GET',
    path: '/leases',
    description: 'Leases, optionally filtered by state',
    handler: (request, reply) => {
      const state = queryParam(request, 'state');
      if (state !== undefined && !(LEASE_STATES as readonly string[]).includes(state)) throw new HttpError(400, INVALID_STATE);
      const leases = ledger.leases({
        ...(state !== undefined ? { state: state as LeaseState } : {}),
        offset: pageOffset(request),
        limit: pageLimit(request),
        now: now(),
      });
      return sendJson(reply, 200, leases);
    },
  };

  const byHash: Route = {
    method: 'GET',
    path: '/leases/{hash}',
    description: 'A lease by hash',
    handler: (request, reply) => {
      const lease = ledger.lease(hexPathParam(request, 'hash', 'invalid hash'), now());
      if (!lease) throw new HttpError(404, 'lease not found');
      return sendJson(reply, 200, lease);
    },
  };

  const requestLease: Route = {
    method: 'POST',
    path: '/lease/request',
    description: "Request a lease signed by this node's own account",
    admin: 'required',
    handler: async (request, reply) => {
      const req = parseLeaseRequest(request.body as JsonValue, ledger.leaseTiming.lease_min_duration_secs);
      try {
        const { lease_hash } = await requester.request(req);
        return sendJson(reply, 201, { lease_hash });
      } catch (err) {
        if (err instanceof LeaseRequestError) throw new HttpError(400, err.message);
        throw err;
      }
    },
  };

  return { list, byHash, requestLease };
}
