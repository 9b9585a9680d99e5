// The signature-check worker pool, run from the compiled tree as the daemon runs it.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import type { SignatureItem, VerifyPool as VerifyPoolType } from '../../agent/intake/verify-pool.js';
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
      const verdicts = await Promise.all([pool.check(items), pool.check(good)]);
      expect(verdicts[0]).toEqual([...Array(25).fill(true), false, false, false, false, true, ...Array(25).fill(true)]);
      expect(verdicts[1]).toEqual(Array(50).fill(true));
      expect(await pool.check([])).toEqual([]);
    } finally {
      await pool.close();
    }
    await expect(pool.check([signed()])).rejects.toThrow('verify pool closed');
  });
});
