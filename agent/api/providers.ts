// `GET /providers` (api.md §7.2): advertisements younger than 15 minutes joined with the ledger's
// leases — `total_leases` counts every lease naming the provider; `active_leases` and `used_*` its
// created and accepted ones (as reported at the time of the read).
import type { LedgerService } from '../../ledger/service.js';
import type { AdvertisementBook } from '../marketplace/advertisements.js';
import { pageLimit, pageOffset } from './http.js';
import type { Route } from './route.js';

export interface ProviderRouteDeps {
  ledger: Pick<LedgerService, 'leases'>;
  advertisements: Pick<AdvertisementBook, 'current'>;
  now: () => bigint;
}

interface Usage {
  used_vcpus: bigint;
  used_memory_mb: bigint;
  used_disk_gb: bigint;
  active_leases: bigint;
  total_leases: bigint;
}

const LEASE_PAGE = 1000;

function usageOf(ledger: ProviderRouteDeps['ledger'], providers: Set<string>, now: bigint): Map<string, Usage> {
  const usage = new Map<string, Usage>();
  for (const p of providers) {
    usage.set(p, { used_vcpus: 0n, used_memory_mb: 0n, used_disk_gb: 0n, active_leases: 0n, total_leases: 0n });
  }
  for (let offset = 0; ; offset += LEASE_PAGE) {
    const page = ledger.leases({ offset, limit: LEASE_PAGE, now });
    for (const lease of page) {
      const u = usage.get(lease.provider);
      if (!u) continue;
      u.total_leases++;
      if (lease.state === 'created' || lease.state === 'accepted') {
        u.active_leases++;
        u.used_vcpus += lease.vcpus;
        u.used_memory_mb += lease.memory_mb;
        u.used_disk_gb += lease.disk_gb;
      }
    }
    if (page.length < LEASE_PAGE) return usage;
  }
}

export function providerRoutes({ ledger, advertisements, now }: ProviderRouteDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/providers',
      description: 'Providers and their advertised resources',
      handler: (request) => {
        const offset = pageOffset(request);
        const ads = advertisements.current().slice(offset, offset + pageLimit(request));
        if (ads.length === 0) return [];
        const usage = usageOf(ledger, new Set(ads.map((ad) => ad.provider)), now());
        return ads.map((ad) => {
          const u = usage.get(ad.provider)!;
          return {
            account: ad.provider,
            vcpus: ad.vcpus,
            memory_mb: ad.memory_mb,
            disk_gb: ad.disk_gb,
            max_concurrent_leases: ad.max_concurrent_leases,
            used_vcpus: u.used_vcpus,
            used_memory_mb: u.used_memory_mb,
            used_disk_gb: u.used_disk_gb,
            active_leases: u.active_leases,
            total_leases: u.total_leases,
            timestamp: ad.timestamp,
          };
        });
      },
    },
  ];
}
