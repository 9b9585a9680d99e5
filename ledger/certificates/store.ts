// Retained performance certificates (leases.md §9.6): keyed by hash, persisted, reloaded at start.
// Certificates a lease or lease_renew block references are pinned for ever; the rest are bounded
// per provider (256, oldest issued_at evicted first) and in all (100,000, least recently used first).
import type { Certificate } from '../types.js';
import type { CertificateService } from '../service.js';
import type { LedgerStore } from '../store/ledger-store.js';
import { checkCertificateContent } from './codec.js';

export const MAX_UNREFERENCED_PER_PROVIDER = 256;
export const MAX_UNREFERENCED_TOTAL = 100_000;

interface Entry {
  cert: Certificate;
  referenced: boolean;
}

export interface CertificateStoreOptions {
  networkId: string;
  iterations: bigint;
  /** Admission rule: the provider has an opened chain on this node. */
  hasAccount: (address: string) => boolean;
  maxPerProvider?: number;
  maxTotal?: number;
}

/** Newer = greater issued_at, then greater hash. */
function newer(a: Certificate, b: Certificate): boolean {
  return a.issued_at !== b.issued_at ? a.issued_at > b.issued_at : a.hash > b.hash;
}

export function covers(c: Certificate, at: bigint): boolean {
  return c.issued_at <= at && (c.expires_at === 0n || at <= c.expires_at);
}

export class CertificateStore implements CertificateService {
  /** Insertion order doubles as LRU order for unreferenced entries. */
  private readonly byHash = new Map<string, Entry>();
  private readonly byProvider = new Map<string, Set<string>>();
  private unreferenced = 0;
  private readonly maxPerProvider: number;
  private readonly maxTotal: number;

  constructor(
    private readonly store: LedgerStore,
    private readonly opts: CertificateStoreOptions,
  ) {
    this.maxPerProvider = opts.maxPerProvider ?? MAX_UNREFERENCED_PER_PROVIDER;
    this.maxTotal = opts.maxTotal ?? MAX_UNREFERENCED_TOTAL;
    this.reload();
  }

  /** (Re)build the index from the table, e.g. after a rolled-back transaction. */
  reload(): void {
    this.byHash.clear();
    this.byProvider.clear();
    this.unreferenced = 0;
    for (const row of this.store.loadCertificates()) this.index(row.cert, row.referenced);
  }

  get(hash: string): Certificate | null {
    const e = this.byHash.get(hash);
    if (!e) return null;
    if (!e.referenced) {
      this.byHash.delete(hash);
      this.byHash.set(hash, e);
    }
    return e.cert;
  }

  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  /** Every retained certificate of a provider. */
  ofProvider(provider: string): Certificate[] {
    return [...(this.byProvider.get(provider) ?? [])].map((h) => this.byHash.get(h)!.cert);
  }

  active(provider: string, at: bigint): Certificate | null {
    let best: Certificate | null = null;
    for (const c of this.ofProvider(provider)) {
      if (covers(c, at) && (best === null || newer(c, best))) best = c;
    }
    return best;
  }

  /** A retained certificate of the same provider that covers `at` and is newer than `cert`. */
  supersededBy(cert: Certificate, at: bigint): Certificate | null {
    const act = this.active(cert.provider, at);
    return act && act.hash !== cert.hash && newer(act, cert) ? act : null;
  }

  add(cert: Certificate, opts: { admitUnopened?: boolean } = {}): void {
    if (this.byHash.has(cert.hash)) return;
    checkCertificateContent(cert, this.opts.networkId, this.opts.iterations);
    if (!opts.admitUnopened && !this.opts.hasAccount(cert.provider)) return;
    if (!this.makeRoomFor(cert)) return;
    this.index(cert, false);
    this.store.putCertificate(cert, false);
  }

  /** Pin a certificate referenced by a held block (call inside the block's transaction). */
  pin(hash: string): void {
    const e = this.byHash.get(hash);
    if (!e || e.referenced) return;
    e.referenced = true;
    this.unreferenced--;
    this.store.putCertificate(e.cert, true);
  }

  private index(cert: Certificate, referenced: boolean): void {
    this.byHash.set(cert.hash, { cert, referenced });
    let set = this.byProvider.get(cert.provider);
    if (!set) this.byProvider.set(cert.provider, (set = new Set()));
    set.add(cert.hash);
    if (!referenced) this.unreferenced++;
  }

  private evict(hash: string): void {
    const e = this.byHash.get(hash);
    if (!e) return;
    this.byHash.delete(hash);
    const set = this.byProvider.get(e.cert.provider);
    set?.delete(hash);
    if (set && set.size === 0) this.byProvider.delete(e.cert.provider);
    if (!e.referenced) this.unreferenced--;
    this.store.deleteCertificate(hash);
  }

  /** Applies the retention bounds for an incoming unreferenced certificate; false = drop it. */
  private makeRoomFor(cert: Certificate): boolean {
    const mine = this.ofProvider(cert.provider).filter((c) => !this.byHash.get(c.hash)!.referenced);
    if (mine.length >= this.maxPerProvider) {
      const oldest = mine.reduce((a, b) => (newer(a, b) ? b : a));
      if (!newer(cert, oldest)) return false;
      this.evict(oldest.hash);
    }
    while (this.unreferenced >= this.maxTotal) {
      const lru = [...this.byHash].find(([, e]) => !e.referenced);
      if (!lru) break;
      this.evict(lru[0]);
    }
    return true;
  }
}
