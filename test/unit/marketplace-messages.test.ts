import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../../ledger/codec/hex.js';
import {
  marketplaceDigest,
  marketplaceFailure,
  marketplacePreimage,
  parseMarketplace,
  signMarketplace,
  type MarketplaceKind,
} from '../../agent/marketplace/messages.js';
import { AdvertisementBook, Advertiser } from '../../agent/marketplace/advertisements.js';
import { devKey, RecordingNetwork, TestClock, vectors, type Obj } from './net-helpers.js';

const mpVectors = vectors.marketplace_vectors as Obj[];
const signerSeed = (name: string) => devKey(Number(name.slice(3))).seed;

describe('marketplace_vectors', () => {
  it.each(mpVectors.map((v) => [v.kind as MarketplaceKind, v] as const))('%s: pre-image, digest, signature, verification', (kind, v) => {
    const networkId = v.network_id as string;
    const msg = parseMarketplace(kind, v.message!) as unknown as Record<string, string | bigint>;
    expect(bytesToHex(marketplacePreimage(kind, networkId, msg))).toBe(v.payload_hex);
    expect(marketplaceDigest(kind, networkId, msg).toString('hex')).toBe(v.digest_hex);
    expect(marketplaceFailure(kind, networkId, msg)).toBeNull();
    const { signature, provider, provider_pub_key, consumer, consumer_pub_key, ...unsigned } = msg;
    void provider, provider_pub_key, consumer, consumer_pub_key;
    expect((signMarketplace(kind, signerSeed(v.signer as string), networkId, unsigned as never) as unknown as Obj).signature).toBe(signature);
    expect(marketplaceFailure(kind, 'other-net', msg)).toBe('signature verification failed');
    const wrongKey = { ...msg, [kind === 'request' ? 'consumer_pub_key' : 'provider_pub_key']: devKey(5).publicKey };
    expect(marketplaceFailure(kind, networkId, wrongKey)).toMatch(/^public key does not derive (provider|consumer)$/);
  });
});

describe('AdvertisementBook and Advertiser', () => {
  const T = 1_800_000_040_000_000_000n;
  const ad = (mpVectors[0]!.message as Obj);

  it('keeps the newest verified ad per provider and lists those younger than 15 minutes', () => {
    const clock = new TestClock(T);
    const book = new AdvertisementBook('devnet', clock.now);
    expect(book.receive({ ...ad, vcpus: 5n })).toBe(false); // signature no longer matches
    expect(book.receive({ ...ad, provider: 'AB' })).toBe(false);
    expect(book.receive({ ...ad, vcpus: '4' })).toBe(false);
    expect(book.receive(ad)).toBe(true);
    expect(book.receive(ad)).toBe(false);
    expect(book.current().map((a) => a.provider)).toEqual([ad.provider]);
    clock.advance(900_000_000_001n);
    expect(book.current()).toEqual([]);
  });

  it('the advertiser signs the node’s capacity, keeps and publishes it', () => {
    const clock = new TestClock(T);
    const book = new AdvertisementBook('devnet', clock.now);
    const network = new RecordingNetwork();
    const advertiser = new Advertiser({
      book,
      network,
      nodeSeed: devKey(1).seed,
      networkId: 'devnet',
      now: clock.now,
      capacity: { vcpus: 4n, memory_mb: 8192n, disk_gb: 100n, max_concurrent_leases: 0n },
    });
    const signed = advertiser.advertise();
    expect(signed.signature).toBe(ad.signature); // same fields and time as the vector
    expect(network.marketplace).toEqual([{ type: 'advertisement', ad: signed }]);
    expect(book.current()).toEqual([signed]);
  });
});
