// The signature-check worker pool, run from the compiled tree as the daemon runs it.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import { powValue } from '../../ledger/crypto/pow.js';
import type { PowItem, SignatureItem, VerifyPool as VerifyPoolType } from '../../agent/intake/verify-pool.js';
import { PROJECT_ROOT } from './harness.js';

const { VerifyPool } = (await import(pathToFileURL(join(PROJECT_ROOT, 'dist/agent/intake/verify-pool.js')).href)) as {
  VerifyPool: typeof VerifyPoolType;
};

function signed(): SignatureItem {
  const seed = Uint8Array.from(randomBytes(32));
  const hash = randomBytes(32);
  return [publicKeyFromSeed(seed), hash.toString('hex'), signEd25519(seed, hash)];
}

describe('VerifyPool (worker threads)', () => {
  it('gives node:crypto’s verdict per item, in order, for good, forged and malformed items', async () => {
    const pool = new VerifyPool(2);
    try {
      const good = Array.from({ length: 50 }, signed);
      const [pub, hash, sig] = signed();
      const forged: SignatureItem = [pub, hash, good[0]![2]];
      const malformed: SignatureItem[] = [[pub.toUpperCase(), hash, sig], [pub, hash.slice(2), sig], [pub, hash, 'zz'.repeat(64)]];
      const items = [...good.slice(0, 25), forged, ...malformed, [pub, hash, sig] as SignatureItem, ...good.slice(25)];
      const verdicts = await Promise.all([pool.check({ signatures: items, pow: [] }), pool.check({ signatures: good, pow: [] })]);
      expect(verdicts[0]!.signatures).toEqual([...Array(25).fill(true), false, false, false, false, true, ...Array(25).fill(true)]);
      expect(verdicts[1]!.signatures).toEqual(Array(50).fill(true));
      expect(await pool.check({ signatures: [], pow: [] })).toEqual({ signatures: [], pow: [] });
    } finally {
      await pool.close();
    }
    await expect(pool.check({ signatures: [signed()], pow: [] })).rejects.toThrow('verify pool closed');
  });

  it('computes the ledger’s PoW value per item, in order, and null for malformed items', async () => {
    const pool = new VerifyPool(1);
    try {
      const good: PowItem[] = Array.from({ length: 40 }, (_, i) => [BigInt(i) * 7919n + (i % 2 === 0 ? 0n : (1n << 63n)), randomBytes(32).toString('hex')]);
      const malformed: PowItem[] = [[-1n, good[0]![1]], [1n << 64n, good[0]![1]], [5n, good[0]![1].slice(2)], [5n, 'ZZ'.repeat(32)], [5n, good[0]![1].toUpperCase()]];
      const { signatures, pow } = await pool.check({ signatures: [signed()], pow: [...good.slice(0, 20), ...malformed, ...good.slice(20)] });
      expect(signatures).toEqual([true]);
      const expected = good.map(([nonce, hash]) => powValue(nonce, hash));
      expect(pow).toEqual([...expected.slice(0, 20), null, null, null, null, null, ...expected.slice(20)]);
    } finally {
      await pool.close();
    }
  });
});
