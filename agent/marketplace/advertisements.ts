// Provider advertisements (provider.md §3): the newest verified one per provider, at most 10,000
// providers (least recently updated evicted); `GET /providers` lists those younger than 15 minutes.
// The node's own advertisement (provider mode) is published at start and every 5 minutes.
import type { JsonValue } from '../../ledger/codec/json.js';
import type { Network } from '../network/network.js';
import {
  marketplaceFailure,
  MarketplaceShapeError,
  parseMarketplace,
  signMarketplace,
  type Advertisement,
} from './messages.js';

export const MAX_ADVERTISED_PROVIDERS = 10_000;
export const ADVERTISEMENT_MAX_AGE_NS = 900_000_000_000n;
const ADVERTISE_INTERVAL_MS = 5 * 60_000;

export class AdvertisementBook {
  /** provider → newest ad; Map order is the update order. */
  private readonly ads = new Map<string, Advertisement>();

  constructor(
    private readonly networkId: string,
    private readonly now: () => bigint,
    private readonly capacity = MAX_ADVERTISED_PROVIDERS,
  ) {}

  /** Verify and keep an advertisement if newer; false when dropped (invalid, or not newer). */
  receive(json: JsonValue): boolean {
    let ad: Advertisement;
    try {
      ad = parseMarketplace('advertisement', json);
    } catch (err) {
      if (err instanceof MarketplaceShapeError) return false;
      throw err;
    }
    if (marketplaceFailure('advertisement', this.networkId, ad as unknown as Record<string, string | bigint>)) return false;
    return this.keep(ad);
  }

  /** Keep an advertisement this node signed itself. */
  keep(ad: Advertisement): boolean {
    const held = this.ads.get(ad.provider);
    if (held && ad.timestamp <= held.timestamp) return false;
    this.ads.delete(ad.provider);
    if (this.ads.size >= this.capacity) this.ads.delete(this.ads.keys().next().value as string);
    this.ads.set(ad.provider, ad);
    return true;
  }

  /** Ads younger than 15 minutes, sorted by provider. */
  current(): Advertisement[] {
    const cutoff = this.now() - ADVERTISEMENT_MAX_AGE_NS;
    return [...this.ads.values()]
      .filter((ad) => ad.timestamp >= cutoff)
      .sort((a, b) => (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0));
  }
}

export interface ProviderCapacity {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** 0 = unlimited. */
  max_concurrent_leases: bigint;
}

/** Publishes this provider's total capacity at start and every 5 minutes (provider.md §3). */
export class Advertiser {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      book: AdvertisementBook;
      network: Pick<Network, 'publishMarketplace'>;
      nodeSeed: Uint8Array;
      networkId: string;
      now: () => bigint;
      capacity: ProviderCapacity;
    },
  ) {}

  advertise(): Advertisement {
    const { deps } = this;
    const ad = signMarketplace('advertisement', deps.nodeSeed, deps.networkId, { ...deps.capacity, timestamp: deps.now() });
    deps.book.keep(ad);
    deps.network.publishMarketplace({ type: 'advertisement', ad });
    return ad;
  }

  start(): void {
    this.advertise();
    this.timer = setInterval(() => this.advertise(), ADVERTISE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
