// `POST /attestation/request` (api.md §7.5, leases.md §5.4).
import { isJsonObject } from '../../ledger/codec/json.js';
import { AttestationError, type TimekeeperService } from '../timekeeper/service.js';
import { HttpError, INVALID_BODY } from './http.js';
import type { Route } from './route.js';

export interface AttestationRouteDeps {
  timekeeper: Pick<TimekeeperService, 'attest'>;
}

export function attestationRoutes({ timekeeper }: AttestationRouteDeps): Route[] {
  return [
    {
      method: 'POST',
      path: '/attestation/request',
      description: 'Request a timekeeper attestation',
      handler: (request) => {
        const body = request.body;
        if (!isJsonObject(body)) throw new HttpError(400, INVALID_BODY);
        try {
          return timekeeper.attest(body['lease_hash']);
        } catch (err) {
          if (err instanceof AttestationError) throw new HttpError(400, err.message);
          throw err;
        }
      },
    },
  ];
}
