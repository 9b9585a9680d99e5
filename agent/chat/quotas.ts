// Chat intake quotas (chat-and-directory.md §4 step 6): 60 per minute per sender, 120 per minute per
// recipient, 100 per second in all. Sliding windows over arrival times; only admitted envelopes count.
import { ChatError } from './errors.js';

const MINUTE_MS = 60_000;
const SECOND_MS = 1_000;

export interface IntakeLimits {
  perSenderPerMinute: number;
  perRecipientPerMinute: number;
  totalPerSecond: number;
}

export const DEFAULT_INTAKE_LIMITS: IntakeLimits = {
  perSenderPerMinute: 60,
  perRecipientPerMinute: 120,
  totalPerSecond: 100,
};

/** Arrival times (ms) inside one sliding window, oldest first, at most `cap` kept. */
class SlidingLog {
  private readonly times: number[] = [];
  constructor(
    private readonly cap: number,
    private readonly windowMs: number,
  ) {}

  private expire(nowMs: number): void {
    while (this.times.length > 0 && this.times[0]! <= nowMs - this.windowMs) this.times.shift();
  }

  full(nowMs: number): boolean {
    this.expire(nowMs);
    return this.times.length >= this.cap;
  }

  /** Seconds until the oldest arrival leaves the window (at least 1). */
  retryAfter(nowMs: number): number {
    const oldest = this.times[0] ?? nowMs;
    return Math.max(1, Math.ceil((oldest + this.windowMs - nowMs) / 1000));
  }

  record(nowMs: number): void {
    this.times.push(nowMs);
  }

  idle(nowMs: number): boolean {
    this.expire(nowMs);
    return this.times.length === 0;
  }
}

export class IntakeQuotas {
  private readonly senders = new Map<string, SlidingLog>();
  private readonly recipients = new Map<string, SlidingLog>();
  private readonly total: SlidingLog;
  private lastSweepMs = 0;

  constructor(
    private readonly nowMs: () => number,
    private readonly limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
  ) {
    this.total = new SlidingLog(limits.totalPerSecond, SECOND_MS);
  }

  /** Admit one envelope from `from` to `to`, or throw the quota's ChatError; admitted ones are counted. */
  admit(from: string, to: string): void {
    const now = this.nowMs();
    this.sweep(now);
    const sender = this.log(this.senders, from, this.limits.perSenderPerMinute);
    if (sender.full(now)) throw new ChatError(429, 'sender quota exceeded', sender.retryAfter(now));
    const recipient = this.log(this.recipients, to, this.limits.perRecipientPerMinute);
    if (recipient.full(now)) throw new ChatError(429, 'recipient quota exceeded', recipient.retryAfter(now));
    if (this.total.full(now)) throw new ChatError(503, 'chat intake busy', 1);
    sender.record(now);
    recipient.record(now);
    this.total.record(now);
  }

  private log(map: Map<string, SlidingLog>, key: string, cap: number): SlidingLog {
    let log = map.get(key);
    if (!log) {
      log = new SlidingLog(cap, MINUTE_MS);
      map.set(key, log);
    }
    return log;
  }

  /** Forget accounts whose window emptied (at most once a minute). */
  private sweep(now: number): void {
    if (now - this.lastSweepMs < MINUTE_MS) return;
    this.lastSweepMs = now;
    for (const map of [this.senders, this.recipients]) {
      for (const [key, log] of map) if (log.idle(now)) map.delete(key);
    }
  }
}
