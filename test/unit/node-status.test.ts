// The readiness sampler (agent/status.ts): the frontier fingerprint is taken when first read.
import { describe, expect, it, vi } from 'vitest';
import { NodeStatus, frontierFingerprint } from '../../agent/status.js';
import { Chains, dev, openTestLedger } from './ledger-helpers.js';

describe('NodeStatus', () => {
  it('takes the frontier fingerprint when /ready first reads it, once per sample', () => {
    const t = openTestLedger();
    const c = new Chains(t);
    const status = new NodeStatus({
      ledger: t.ledger,
      ownAddress: dev(1).address,
      nodeId: 'test',
      version: 'test',
      peerCount: () => 0,
      recentSync: () => null,
      serving: () => true,
      readyMinPeers: 0,
      finalityStallNs: 90_000_000_000n,
    });
    const passes = vi.spyOn(t.ledger, 'sortedFrontiers');
    status.sample();
    c.fund(dev(2), 100n, 0n);
    expect(passes).not.toHaveBeenCalled();

    const first = status.ready().document.frontier_fingerprint;
    expect(first).toBe(frontierFingerprint(t.ledger));
    c.fund(dev(3), 100n, 0n);
    expect(status.ready().document.frontier_fingerprint).toBe(first);
    // Two passes so far: the sample's, and the expectation's own.
    expect(passes).toHaveBeenCalledTimes(2);

    status.sample();
    expect(status.ready().document.frontier_fingerprint).toBe(frontierFingerprint(t.ledger));
    expect(status.ready().document.frontier_fingerprint).not.toBe(first);
    t.close();
  });
});
