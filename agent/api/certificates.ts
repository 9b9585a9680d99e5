// Certificate routes (api.md §7.3, leases.md §9).
import { certificateToJson } from '../../ledger/certificates/codec.js';
import type { LedgerService } from '../../ledger/service.js';
import type { Certificate } from '../../ledger/types.js';
import { hexPathParam, HttpError } from './http.js';
import type { Route } from './route.js';

export interface CertificateRouteDeps {
  ledger: Pick<LedgerService, 'certificates'>;
  /** This node's own certificate, even if expired (CertificateIssuer.myCertificate); null when none. */
  ownCertificate: () => Certificate | null;
  now: () => bigint;
}

export function certificateRoutes({ ledger, ownCertificate, now }: CertificateRouteDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/certificate',
      description: "This node's performance certificate",
      handler: () => {
        const cert = ownCertificate();
        if (!cert) throw new HttpError(404, 'no performance certificate');
        return certificateToJson(cert);
      },
    },
    {
      method: 'GET',
      path: '/certificate/hash/{hash}',
      description: 'A retained certificate by hash, expired ones included',
      handler: (request) => {
        const hash = hexPathParam(request, 'hash', 'invalid certificate hash');
        const cert = ledger.certificates.get(hash);
        if (!cert) throw new HttpError(404, 'no certificate with that hash');
        return certificateToJson(cert);
      },
    },
    {
      method: 'GET',
      path: '/certificate/{provider}',
      description: "A provider's active certificate",
      handler: (request) => {
        const provider = hexPathParam(request, 'provider', 'invalid provider address');
        const cert = ledger.certificates.active(provider, now());
        if (!cert) throw new HttpError(404, 'no certificate for provider');
        return certificateToJson(cert);
      },
    },
  ];
}
