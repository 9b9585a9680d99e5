// The provider's working loop (provider.md §4, §10; leases.md §8.6). Every decision is derived from
// the ledger's state on each tick, so a restart at any point simply resumes:
//   created lease addressed to us → policy → provision the VM → attest → lease_accept (stake, locked R)
//   accepted lease of ours past expiry → attest → lease_settle (emission) → the reconciler tears down
//   accepted lease we consume, force window open → attest → lease_force_settle (when we are the consumer)
import type { Logger } from 'pino';
import { lowerMedian } from '../../ledger/crypto/attestation.js';
import { finishBlock } from '../../ledger/crypto/block-signer.js';
import { LedgerError } from '../../ledger/errors.js';
import type { LedgerService } from '../../ledger/service.js';
import { emission, leaseStake } from '../../ledger/state/lease-math.js';
import type { Attestation, Block, Lease } from '../../ledger/types.js';
import { emptyBlock } from '../../ledger/types.js';
import { judgeLease, type AcceptPolicy, type Commitments } from './policy.js';

/** Governance the provider's own blocks must match, read as of their timestamp (statechain.md §11). */
export interface GovernanceAt {
  stakeDivisor: bigint;
  /** Newest epoch first; the accept locks the newest one that has started (leases.md §6). */
  epochCandidates(t: bigint): { r_effective: bigint; payout_cap: bigint; twap_milli_usd: bigint }[];
}

export interface ProviderLoopDeps {
  ledger: LedgerService;
  governanceAt(t: bigint): GovernanceAt;
  identity: { seed: Uint8Array; address: string };
  /** Effective PoW difficulty for this node's own blocks. */
  difficulty(): bigint;
  attestations: { gather(identifier: string): Promise<Attestation[]> };
  /** Provider mode; absent, the node only force-settles the leases it consumes. */
  provider?: ProviderRole;
  /** `--no-auto-settle` turns this off (DECISIONS.md: staging a force-settle). */
  autoSettle: boolean;
  now(): bigint;
  log: Logger;
}

export interface ProviderRole {
  policy: AcceptPolicy;
  /** VMs: provision before accept, release on refusal. Teardown of ended leases is the reconciler's. */
  vms: {
    ensure(lease: Lease): Promise<{ status: string; error: string }>;
    release(leaseHash: string): Promise<void>;
    committed(): Commitments;
  };
}

/** R fallback when no epoch exists at all (leases.md §6). */
const R_FALLBACK = 2000n;

export class ProviderLoop {
  /** Leases with an accept attempt under way (one attempt per lease at a time). */
  private readonly inFlight = new Set<string>();
  /** Leases refused by policy or whose provisioning failed: not retried (provider.md §4). */
  private readonly refused = new Map<string, string>();
  private readonly busySettling = new Set<string>();

  constructor(private readonly d: ProviderLoopDeps) {}

  /** One pass over the ledger; cheap when there is nothing to do. */
  tick(): void {
    const now = this.d.now();
    if (this.d.provider) {
      for (const lease of this.d.ledger.leases({ state: 'created', now })) {
        if (lease.provider === this.d.identity.address && !this.inFlight.has(lease.lease_hash) && !this.refused.has(lease.lease_hash)) {
          void this.accept(lease);
        }
      }
    }
    for (const lease of this.d.ledger.leases({ state: 'accepted', now })) {
      if (this.busySettling.has(lease.lease_hash)) continue;
      if (lease.provider === this.d.identity.address && this.d.autoSettle && now >= lease.expires_at) {
        if (now <= lease.expires_at + this.d.ledger.leaseTiming.lease_settle_grace_ns) void this.settle(lease);
      } else if (lease.consumer === this.d.identity.address && now > this.forceWindowOpens(lease)) {
        void this.forceSettle(lease);
      }
    }
  }

  /** Why a lease was not accepted (for operators and tests). */
  refusal(leaseHash: string): string | undefined {
    return this.refused.get(leaseHash);
  }

  private forceWindowOpens(lease: Lease): bigint {
    const t = this.d.ledger.leaseTiming;
    return lease.expires_at + t.lease_settle_grace_ns + t.lease_force_settle_gap_ns;
  }

  private async accept(lease: Lease): Promise<void> {
    const hash = lease.lease_hash;
    const log = this.d.log.child({ lease: hash });
    this.inFlight.add(hash);
    try {
      const verdict = this.checkGates(lease);
      if (!verdict.ok) {
        this.refused.set(hash, verdict.reason);
        log.info({ reason: verdict.reason }, 'lease refused');
        return;
      }
      const vm = await this.d.provider!.vms.ensure(lease);
      if (vm.status !== 'running') {
        this.refused.set(hash, `provisioning failed: ${vm.error}`);
        log.warn({ error: vm.error }, 'provisioning failed; lease not accepted');
        return;
      }
      // Attest only once the machine is up: billing starts when it is usable, and the
      // attestations are fresh for the live skew check.
      const attestations = await this.d.attestations.gather(hash);
      const current = this.d.ledger.lease(hash, this.d.now());
      if (!current || current.state !== 'created') return; // cancelled meanwhile: the reconciler cleans up
      try {
        this.write(this.buildAccept(current, attestations));
        log.info('lease accepted');
      } catch (err) {
        if (err instanceof LedgerError && err.retryable('live')) {
          log.info({ error: err.message }, 'accept deferred; retrying next tick');
          return;
        }
        const standing = this.d.ledger.lease(hash, this.d.now());
        if (standing?.state === 'accepted') return; // a duplicate attempt: our accept already stands
        this.refused.set(hash, err instanceof Error ? err.message : String(err));
        log.warn({ error: err instanceof Error ? err.message : String(err) }, 'accept rejected; releasing the VM');
        await this.d.provider!.vms.release(hash);
      }
    } catch (err) {
      log.warn({ error: err instanceof Error ? err.message : String(err) }, 'accept attempt failed; retrying next tick');
    } finally {
      this.inFlight.delete(hash);
    }
  }

  private checkGates(lease: Lease): { ok: true } | { ok: false; reason: string } {
    const { policy, vms } = this.d.provider!;
    const verdict = judgeLease(lease, policy, vms.committed());
    if (!verdict.ok) return verdict;
    const cert = this.d.ledger.certificates.get(lease.certificate_hash);
    const now = this.d.now();
    if (!cert || cert.provider !== this.d.identity.address) return { ok: false, reason: 'lease does not reference our certificate' };
    if (cert.expires_at !== 0n && now > cert.expires_at) return { ok: false, reason: 'our certificate referenced by the lease has expired' };
    const stake = leaseStake(lease.cost, this.d.governanceAt(now).stakeDivisor);
    const have = this.d.ledger.runningBalance(this.d.identity.address, 'XUSD');
    if (have < stake) return { ok: false, reason: `stake ${stake} XUSD not covered (balance ${have})` };
    return { ok: true };
  }

  private buildAccept(lease: Lease, attestations: Attestation[]): Block {
    const now = this.d.now();
    const gov = this.d.governanceAt(now);
    const epoch = gov.epochCandidates(now)[0];
    const stake = leaseStake(lease.cost, gov.stakeDivisor);
    return {
      ...this.ownBlock('lease_accept', 'XUSD', now),
      source: lease.lease_hash,
      amount: stake,
      balance: this.d.ledger.runningBalance(this.d.identity.address, 'XUSD') - stake,
      certificate_hash: lease.certificate_hash,
      locked_r: epoch?.r_effective ?? R_FALLBACK,
      locked_payout_cap: epoch?.payout_cap ?? 0n,
      locked_twap_milli: epoch?.twap_milli_usd ?? 0n,
      attestations,
    };
  }

  private async settle(lease: Lease): Promise<void> {
    const hash = lease.lease_hash;
    this.busySettling.add(hash);
    try {
      const attestations = await this.d.attestations.gather(hash);
      if (lowerMedian(attestations.map((a) => a.timestamp)) < lease.expires_at) return; // not yet: next tick
      const now = this.d.now();
      const amount = leaseEmission(lease);
      this.write({
        ...this.ownBlock('lease_settle', 'XE', now),
        source: hash,
        amount,
        balance: this.d.ledger.runningBalance(this.d.identity.address, 'XE') + amount,
        attestations,
      });
      this.d.log.info({ lease: hash, emission: amount.toString() }, 'lease settled');
    } catch (err) {
      this.d.log.warn({ lease: hash, error: err instanceof Error ? err.message : String(err) }, 'settle attempt failed; retrying next tick');
    } finally {
      this.busySettling.delete(hash);
    }
  }

  private async forceSettle(lease: Lease): Promise<void> {
    const hash = lease.lease_hash;
    this.busySettling.add(hash);
    try {
      const attestations = await this.d.attestations.gather(hash);
      if (lowerMedian(attestations.map((a) => a.timestamp)) <= this.forceWindowOpens(lease)) return;
      const escrow = lease.renewals.reduce((s, r) => s + r.cost, lease.cost);
      this.write({
        ...this.ownBlock('lease_force_settle', 'XUSD', this.d.now()),
        source: hash,
        balance: this.d.ledger.runningBalance(this.d.identity.address, 'XUSD') + escrow,
        attestations,
      });
      this.d.log.info({ lease: hash }, 'lease force-settled');
    } catch (err) {
      this.d.log.warn({ lease: hash, error: err instanceof Error ? err.message : String(err) }, 'force-settle attempt failed; retrying next tick');
    } finally {
      this.busySettling.delete(hash);
    }
  }

  /** A block on this node's own chain, from its current frontier. */
  private ownBlock(type: Block['type'], asset: string, timestamp: bigint): Block {
    const frontier = this.d.ledger.frontier(this.d.identity.address);
    if (frontier === null) throw new Error('the node account has no chain yet');
    return { ...emptyBlock(type), account: this.d.identity.address, previous: frontier, asset, timestamp };
  }

  /**
   * Finish and submit synchronously: reading the frontier and balance, hashing, signing and the
   * ledger's commit happen in one turn of the event loop, so no other write of this node can slip
   * between them (provider.md §4 step 8).
   */
  private write(block: Block): void {
    const done = finishBlock(block, { networkId: this.d.ledger.networkId, difficulty: this.d.difficulty(), seed: this.d.identity.seed });
    this.d.ledger.submit(done, 'live');
  }
}

/** Settle emission: the base segment plus each renewal segment with its own locked triple (leases.md §7). */
export function leaseEmission(lease: Lease): bigint {
  let total = emission(lease.cost, lease.locked_r, lease.locked_payout_cap, lease.locked_twap_milli);
  for (const r of lease.renewals) total += emission(r.cost, r.locked_r, r.locked_payout_cap, r.locked_twap_milli);
  return total;
}
