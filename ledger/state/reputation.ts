// Reputation aggregates (ledger.md §18), derived from the lease records an account takes part in.
import type { Reputation } from '../service.js';
import { effectiveDuration, type StoredLease } from './records.js';

export const REPUTATION_VERSION = 1;

export function computeReputation(address: string, leases: Iterable<StoredLease>): Reputation {
  const r: Reputation = {
    version: REPUTATION_VERSION,
    leases_accepted_as_provider: 0n,
    leases_settled_as_provider: 0n,
    lease_seconds_settled_as_provider: 0n,
    leases_unfulfilled_as_provider: 0n,
    leases_accepted_as_consumer: 0n,
    leases_settled_as_consumer: 0n,
    leases_cancelled_as_consumer: 0n,
    lease_seconds_settled_as_consumer: 0n,
    leases_unfulfilled_as_consumer: 0n,
    first_activity_at: 0n,
    last_activity_at: 0n,
  };
  let seen = false;
  const event = (t: bigint) => {
    if (!seen || t < r.first_activity_at) r.first_activity_at = t;
    if (!seen || t > r.last_activity_at) r.last_activity_at = t;
    seen = true;
  };
  for (const l of leases) {
    const provider = l.provider === address;
    const consumer = l.consumer === address;
    const wasAccepted = l.state === 'accepted' || l.state === 'settled' || l.state === 'unfulfilled';
    if (wasAccepted) {
      if (provider) r.leases_accepted_as_provider++;
      if (consumer) r.leases_accepted_as_consumer++;
      event(l.start_time);
    }
    if (l.state === 'settled') {
      const secs = effectiveDuration(l);
      if (provider) {
        r.leases_settled_as_provider++;
        r.lease_seconds_settled_as_provider += secs;
      }
      if (consumer) {
        r.leases_settled_as_consumer++;
        r.lease_seconds_settled_as_consumer += secs;
      }
      event(l.ended_at);
    } else if (l.state === 'cancelled') {
      if (consumer) {
        r.leases_cancelled_as_consumer++;
        event(l.ended_at);
      }
    } else if (l.state === 'unfulfilled') {
      if (provider) r.leases_unfulfilled_as_provider++;
      if (consumer) r.leases_unfulfilled_as_consumer++;
      event(l.ended_at);
    }
  }
  return r;
}
