// Retained certificates (leases.md §9.6): admission, active certificate, retention, persistence.
import { describe, expect, it } from 'vitest';
import { CertificateStore } from '../../ledger/certificates/store.js';
import { LedgerStore } from '../../ledger/store/ledger-store.js';
import { openDatabase } from '../../ledger/store/db.js';
import { join } from 'node:path';
import { Chains, SECOND, T0, dev, devnetCertificate, expectReject, makeCertificate, openTestLedger, tempDir } from './ledger-helpers.js';

const D1 = dev(1);
const D7 = dev(7);

function bareStore(opts: { maxPerProvider?: number; maxTotal?: number; opened?: Set<string> } = {}) {
  const db = openDatabase(join(tempDir(), 'c.db'));
  const store = new LedgerStore(db);
  const opened = opts.opened ?? new Set([D1.address, D7.address]);
  const make = () =>
    new CertificateStore(store, { networkId: 'devnet', iterations: 1_000_000n, hasAccount: (a) => opened.has(a), ...opts });
  return { db, store, certs: make(), reopen: make };
}

describe('certificate store', () => {
  it('content-checks, admits only opened providers unless fetched by hash', () => {
    const { certs } = bareStore({ opened: new Set() });
    const cert = devnetCertificate();
    certs.add(cert);
    expect(certs.get(cert.hash)).toBeNull();
    certs.add(cert, { admitUnopened: true });
    expect(certs.get(cert.hash)).toEqual(cert);
    expectReject(
      () => certs.add({ ...cert, hash: D7.address }, { admitUnopened: true }),
      `certificate: hash mismatch: got ${D7.address}, want ${cert.hash}`,
    );
  });

  it('answers the active certificate at T: greatest issued_at covering T', () => {
    const { certs } = bareStore();
    const a = makeCertificate(D1, T0);
    const b = makeCertificate(D1, T0 + 10n * SECOND);
    certs.add(a);
    certs.add(b);
    expect(certs.active(D1.address, T0 - 1n)).toBeNull();
    expect(certs.active(D1.address, T0 + SECOND)?.hash).toBe(a.hash);
    expect(certs.active(D1.address, T0 + 10n * SECOND)?.hash).toBe(b.hash);
    expect(certs.active(D1.address, b.expires_at + 1n)).toBeNull();
    expect(certs.active(D7.address, T0 + SECOND)).toBeNull();
    expect(certs.supersededBy(a, T0 + 20n * SECOND)?.hash).toBe(b.hash);
    expect(certs.supersededBy(b, T0 + 20n * SECOND)).toBeNull();
  });

  it('bounds unreferenced certificates per provider; pinned ones stay for ever; all persist', () => {
    const { certs, reopen } = bareStore({ maxPerProvider: 2 });
    const c1 = makeCertificate(D1, T0);
    const c2 = makeCertificate(D1, T0 + 1n);
    const c3 = makeCertificate(D1, T0 + 2n);
    certs.add(c1);
    certs.pin(c1.hash);
    certs.add(c2);
    certs.add(c3);
    expect([certs.get(c1.hash), certs.get(c2.hash), certs.get(c3.hash)].map((c) => c?.hash)).toEqual([c1.hash, c2.hash, c3.hash]);
    const c4 = makeCertificate(D1, T0 + 3n);
    certs.add(c4); // evicts c2, the oldest unreferenced
    expect(certs.get(c2.hash)).toBeNull();
    const old = makeCertificate(D1, T0 - 5n);
    certs.add(old); // older than every retained unreferenced one: dropped
    expect(certs.get(old.hash)).toBeNull();
    const again = reopen();
    expect([c1, c3, c4].map((c) => again.get(c.hash)?.hash)).toEqual([c1.hash, c3.hash, c4.hash]);
    expect(again.get(c2.hash)).toBeNull();
  });

  it('bounds the total, least recently used first', () => {
    const { certs } = bareStore({ maxTotal: 2 });
    const a = makeCertificate(D1, T0);
    const b = makeCertificate(D7, T0);
    const c = makeCertificate(D1, T0 + 1n);
    certs.add(a);
    certs.add(b);
    certs.get(a.hash); // a is now more recently used than b
    certs.add(c);
    expect(certs.get(b.hash)).toBeNull();
    expect(certs.get(a.hash)?.hash).toBe(a.hash);
  });

  it('pins the certificate a lease block references', () => {
    const t = openTestLedger();
    const ch = new Chains(t);
    t.ledger.certificates.add(devnetCertificate(), { admitUnopened: true });
    ch.fund(dev(6), 0n, 10_000n);
    const row = () => t.db.prepare('SELECT referenced FROM ledger_certificates WHERE hash = ?').get(devnetCertificate().hash) as { referenced: number };
    expect(row().referenced).toBe(0);
    ch.submit(ch.next('lease', dev(6), { asset: 'XUSD', destination: D1.address, vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 60n, amount: 667n, balance: 10_000n - 667n, certificate_hash: devnetCertificate().hash }));
    expect(row().referenced).toBe(1);
  });
});

