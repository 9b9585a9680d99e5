import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatEventHub, type EventSink } from '../../agent/chat/events.js';
import { ChatError } from '../../agent/chat/errors.js';
import type { ChatEnvelope } from '../../agent/chat/envelope.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);

/** An in-memory sink; `blocked` makes write() report back-pressure until drain(). */
class MemorySink extends EventEmitter implements EventSink {
  chunks: string[] = [];
  blocked = false;
  ended = false;
  destroyed = false;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return !this.blocked;
  }
  end(): void {
    this.ended = true;
  }
  drain(): void {
    this.blocked = false;
    this.emit('drain');
  }
  get text(): string {
    return this.chunks.join('');
  }
}

function env(n: number, from = A, to = B): ChatEnvelope {
  return { id: n.toString(16).padStart(64, '0'), from, pub_key: 'k', to, message: `m${n}`, timestamp: BigInt(n), signature: 's', pow_nonce: 0n };
}

afterEach(() => vi.useRealTimers());

describe('ChatEventHub', () => {
  it('writes `: connected` first, then unnamed data events of compact envelope JSON', () => {
    const hub = new ChatEventHub();
    const sink = new MemorySink();
    hub.subscribe(sink, 'k', null);
    hub.publish(env(1));
    expect(sink.chunks[0]).toBe(': connected\n\n');
    expect(sink.chunks[1]).toBe(
      `data: {"id":"${env(1).id}","from":"${A}","pub_key":"k","to":"${B}","message":"m1","timestamp":1,"signature":"s","pow_nonce":0}\n\n`,
    );
    expect(sink.text).not.toMatch(/^(event|id):/m);
    hub.closeAll();
  });

  it('an account filter passes only envelopes from or to the account', () => {
    const hub = new ChatEventHub();
    const sink = new MemorySink();
    hub.subscribe(sink, 'k', C);
    hub.publish(env(1, A, B));
    hub.publish(env(2, C, B));
    hub.publish(env(3, A, C));
    expect(sink.chunks.filter((c) => c.startsWith('data:'))).toHaveLength(2);
    expect(sink.text).not.toContain(env(1).id);
    hub.closeAll();
  });

  it('buffers at most 64 envelopes while a subscriber is slow; extra ones are dropped for it only', () => {
    const hub = new ChatEventHub();
    const slow = new MemorySink();
    const fast = new MemorySink();
    hub.subscribe(slow, 'k1', null);
    hub.subscribe(fast, 'k2', null);
    slow.blocked = true;
    hub.publish(env(0)); // written, reports back-pressure
    for (let i = 1; i <= 100; i++) hub.publish(env(i));
    slow.drain();
    const slowData = slow.chunks.filter((c) => c.startsWith('data:'));
    expect(slowData).toHaveLength(1 + 64);
    expect(slowData[64]).toContain(env(64).id);
    expect(fast.chunks.filter((c) => c.startsWith('data:'))).toHaveLength(101);
    hub.closeAll();
  });

  it('pings every 20 s', () => {
    vi.useFakeTimers();
    const hub = new ChatEventHub();
    const sink = new MemorySink();
    hub.subscribe(sink, 'k', null);
    vi.advanceTimersByTime(19_999);
    expect(sink.chunks).toEqual([': connected\n\n']);
    vi.advanceTimersByTime(1);
    expect(sink.chunks[1]).toBe(': ping\n\n');
    vi.advanceTimersByTime(40_000);
    expect(sink.chunks.filter((c) => c === ': ping\n\n')).toHaveLength(3);
    hub.closeAll();
  });

  it('a failed write or a closed connection ends the subscription', () => {
    const hub = new ChatEventHub();
    const sink = new MemorySink();
    hub.subscribe(sink, 'k', null);
    sink.write = () => {
      throw new Error('EPIPE');
    };
    hub.publish(env(1));
    expect(hub.size).toBe(0);
    expect(sink.ended).toBe(true);
    const other = new MemorySink();
    hub.subscribe(other, 'k', null);
    other.emit('close');
    expect(hub.size).toBe(0);
  });

  it('caps: 8 per client key (429), then the total (503), each with Retry-After', () => {
    const hub = new ChatEventHub({ perClient: 8, total: 10, buffer: 64, pingMs: 20_000 });
    const sinks: MemorySink[] = [];
    for (let i = 0; i < 8; i++) hub.subscribe((sinks[i] = new MemorySink()), 'same', null);
    const e429 = (() => {
      try {
        hub.checkCapacity('same');
      } catch (e) {
        return e as ChatError;
      }
    })();
    expect([e429?.status, e429?.message, e429?.retryAfter]).toEqual([429, 'too many event streams', 5]);
    hub.subscribe(new MemorySink(), 'other1', null);
    hub.subscribe(new MemorySink(), 'other2', null);
    expect(() => hub.subscribe(new MemorySink(), 'other3', null)).toThrow(ChatError);
    try {
      hub.checkCapacity('other3');
    } catch (e) {
      expect([(e as ChatError).status, (e as ChatError).message]).toEqual([503, 'too many event streams']);
    }
    sinks[0]!.emit('close');
    hub.checkCapacity('same'); // a slot freed
    hub.closeAll();
    expect(hub.size).toBe(0);
  });
});
