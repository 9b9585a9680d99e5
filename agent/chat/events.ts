// SSE fan-out of newly stored envelopes (chat-and-directory.md §7). Each subscriber has a 64-envelope
// buffer (full → that subscriber misses the envelope); `: ping` every 20 s; a failed write ends it.
// Caps: 8 open streams per client key, 1024 in all.
import { stringifyJson } from '../../ledger/codec/json.js';
import { envelopeToJson, type ChatEnvelope } from './envelope.js';
import { ChatError } from './errors.js';

export interface EventHubLimits {
  perClient: number;
  total: number;
  buffer: number;
  pingMs: number;
}

export const DEFAULT_EVENT_HUB_LIMITS: EventHubLimits = { perClient: 8, total: 1024, buffer: 64, pingMs: 20_000 };

/** The writable end of one stream (a Node ServerResponse satisfies it). */
export interface EventSink {
  write(chunk: string): boolean;
  end(): void;
  once(event: 'drain', listener: () => void): unknown;
  on(event: 'close' | 'error', listener: (...args: unknown[]) => void): unknown;
  readonly destroyed?: boolean;
}

class Subscriber {
  private readonly queue: string[] = [];
  private waitingForDrain = false;
  private closed = false;
  private readonly ping: NodeJS.Timeout;

  constructor(
    private readonly sink: EventSink,
    /** Only envelopes from or to this account; null = everything. */
    readonly account: string | null,
    private readonly limits: EventHubLimits,
    private readonly onClose: () => void,
  ) {
    sink.on('close', () => this.close());
    sink.on('error', () => this.close());
    this.ping = setInterval(() => this.send(': ping\n\n', true), limits.pingMs);
    this.ping.unref();
  }

  offer(envelope: ChatEnvelope): void {
    if (this.account !== null && envelope.from !== this.account && envelope.to !== this.account) return;
    this.send(`data: ${stringifyJson(envelopeToJson(envelope))}\n\n`, false);
  }

  private send(frame: string, isPing: boolean): void {
    if (this.closed) return;
    if (this.waitingForDrain) {
      // Pings are not buffered: the stream is evidently alive while it drains.
      if (!isPing && this.queue.length < this.limits.buffer) this.queue.push(frame);
      return;
    }
    this.write(frame);
  }

  private write(frame: string): void {
    try {
      if (this.sink.destroyed) return this.close();
      if (!this.sink.write(frame)) {
        this.waitingForDrain = true;
        this.sink.once('drain', () => this.drain());
      }
    } catch {
      this.close();
    }
  }

  private drain(): void {
    this.waitingForDrain = false;
    while (!this.waitingForDrain && !this.closed && this.queue.length > 0) this.write(this.queue.shift()!);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ping);
    this.queue.length = 0;
    try {
      this.sink.end();
    } catch {
      // already gone
    }
    this.onClose();
  }
}

export class ChatEventHub {
  private readonly subscribers = new Set<Subscriber>();
  private readonly perClient = new Map<string, number>();

  constructor(private readonly limits: EventHubLimits = DEFAULT_EVENT_HUB_LIMITS) {}

  /** Throws the cap's ChatError (429 per client, 503 in all) when `clientKey` may not open a stream. */
  checkCapacity(clientKey: string): void {
    if ((this.perClient.get(clientKey) ?? 0) >= this.limits.perClient) {
      throw new ChatError(429, 'too many event streams', 5);
    }
    if (this.subscribers.size >= this.limits.total) throw new ChatError(503, 'too many event streams', 5);
  }

  /**
   * Start streaming to an open sink whose headers are already written: checks the caps again,
   * writes `: connected`, and from then on every offered envelope that passes the filter.
   */
  subscribe(sink: EventSink, clientKey: string, account: string | null): void {
    this.checkCapacity(clientKey);
    this.perClient.set(clientKey, (this.perClient.get(clientKey) ?? 0) + 1);
    const subscriber = new Subscriber(sink, account, this.limits, () => {
      this.subscribers.delete(subscriber);
      const left = (this.perClient.get(clientKey) ?? 1) - 1;
      if (left > 0) this.perClient.set(clientKey, left);
      else this.perClient.delete(clientKey);
    });
    this.subscribers.add(subscriber);
    sink.write(': connected\n\n');
  }

  /** Offer a newly stored envelope to every subscriber. */
  publish(envelope: ChatEnvelope): void {
    for (const subscriber of this.subscribers) subscriber.offer(envelope);
  }

  get size(): number {
    return this.subscribers.size;
  }

  /** End every stream (shutdown). */
  closeAll(): void {
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }
}
