// Provider-side handlers for `GET /vms` and `GET /vms/{leaseHash}` (api.md §8.1–§8.2), plugged into
// vms.ts through its `VmHandlers` seam. `credentials` appear only for an authorized reader: the admin
// token (both routes) or a valid VM read proof by the lease's access key (single VM only); anything
// else — missing, invalid, expired — only hides them.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LeaseView } from '../../provisioning/lease-view.js';
import { vmRecordJson, type VmRecord } from '../../provisioning/records.js';
import { hasAdmin } from './auth.js';
import { hexPathParam, HttpError, queryParam, sendJson } from './http.js';
import type { VmHandlers } from './vms.js';

export interface VmRecordHandlerDeps {
  records: { get(leaseHash: string): VmRecord | null; list(): VmRecord[] };
  leases: Pick<LeaseView, 'get'>;
  adminToken: string | null;
  /** `ReadAuth.verifyVmReadProof`: throws when the proof does not hold, consumes the challenge when it does. */
  verifyVmReadProof(accessPubKey: string, challenge: string, sig: string): void;
  /** Answers for a lease this node runs no VM for (the relay of api.md §8.2 step 3); else `404 vm not found`. */
  fallback?: VmHandlers['get'];
}

export function providerVmHandlers(deps: VmRecordHandlerDeps): Required<Pick<VmHandlers, 'list' | 'get'>> {
  const proofHolds = (request: FastifyRequest, leaseHash: string): boolean => {
    const challenge = queryParam(request, 'challenge');
    const sig = queryParam(request, 'sig');
    const accessKey = deps.leases.get(leaseHash)?.accessPubKey;
    if (!challenge || !sig || !accessKey) return false;
    try {
      deps.verifyVmReadProof(accessKey, challenge, sig);
      return true;
    } catch {
      return false;
    }
  };

  return {
    list: (request: FastifyRequest, reply: FastifyReply) => {
      const admin = hasAdmin(request, deps.adminToken);
      return sendJson(reply, 200, deps.records.list().map((v) => vmRecordJson(v, admin)));
    },
    get: (request: FastifyRequest, reply: FastifyReply) => {
      const leaseHash = hexPathParam(request, 'leaseHash', 'invalid lease hash');
      const record = deps.records.get(leaseHash);
      if (!record) {
        if (deps.fallback) return deps.fallback(request, reply);
        throw new HttpError(404, 'vm not found');
      }
      const authorized = hasAdmin(request, deps.adminToken) || proofHolds(request, leaseHash);
      return sendJson(reply, 200, vmRecordJson(record, authorized));
    },
  };
}
