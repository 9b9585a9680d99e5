import { describe, expect, it } from 'vitest';
import { signEd25519 } from '../../ledger/crypto/ed25519.js';
import { solvePow } from '../../ledger/crypto/pow.js';
import { ChatService, RelayRefusal } from '../../agent/chat/service.js';
import { ChatStore } from '../../agent/chat/store.js';
import { IntakeQuotas } from '../../agent/chat/quotas.js';
import { ChatError } from '../../agent/chat/errors.js';
import { envelopeId, type ChatEnvelope } from '../../agent/chat/envelope.js';
import { KeyBindings } from '../../agent/chat/key-bindings.js';
import { DirectoryService } from '../../agent/directory/service.js';
import { DirectoryStore } from '../../agent/directory/store.js';
import { signRegistration } from '../../agent/directory/registration.js';
import { LocalNetwork } from '../../agent/network/local.js';
import { NetworkError, type Network } from '../../agent/network/network.js';
import { devKey, LedgerReads, OTHER_PEER, RecordingNetwork, SELF_PEER, TestClock } from './net-helpers.js';

const T = 1_800_000_000_000_000_000n;
const DIFFICULTY = 0x2n;
const [dev1, dev6, dev7, dev8] = [devKey(1), devKey(6), devKey(7), devKey(8)];

interface Node {
  clock: TestClock;
  ledger: LedgerReads;
  network: Network;
  directory: DirectoryService;
  store: ChatStore;
  bindings: KeyBindings;
  chat: ChatService;
}

function node(network: Network = new RecordingNetwork(SELF_PEER), limits?: ConstructorParameters<typeof IntakeQuotas>[1]): Node {
  const clock = new TestClock(T);
  const ledger = new LedgerReads();
  const bindings = new KeyBindings(ledger.publicKeyOf, ':memory:');
  const directory = new DirectoryService({
    store: new DirectoryStore(clock.now),
    network,
    networkId: 'devnet',
    now: clock.now,
    ledger,
    rememberKey: (a, k) => bindings.remember(a, k),
    nodeSeed: dev1.seed,
  });
  const store = new ChatStore(clock.now);
  const chat = new ChatService({
    store,
    quotas: new IntakeQuotas(clock.nowMs, limits),
    directory,
    network,
    bindings,
    now: clock.now,
    difficulty: DIFFICULTY,
  });
  return { clock, ledger, network, directory, store, bindings, chat };
}

/** Open the account on the node's ledger and register it as served by `peer`. */
function register(n: Node, key: ReturnType<typeof devKey>, peer: string): void {
  n.ledger.openAccount(key.address, key.publicKey);
  n.directory.register(signRegistration(key.seed, 'devnet', peer, n.clock.ns) as never, 'api');
}

function envelope(from = dev6, to = dev7, message = 'hello', timestamp = T): ChatEnvelope {
  const base = { from: from.address, pub_key: from.publicKey, to: to.address, message, timestamp };
  const id = envelopeId(base);
  return { ...base, id, signature: signEd25519(from.seed, Buffer.from(id, 'hex')), pow_nonce: solvePow(id, DIFFICULTY) };
}

async function sendError(n: Node, body: unknown): Promise<[number, string, number | undefined]> {
  try {
    await n.chat.send(body as never);
  } catch (e) {
    expect(e).toBeInstanceOf(ChatError);
    const c = e as ChatError;
    return [c.status, c.message, c.retryAfter];
  }
  throw new Error('expected a ChatError');
}

describe('POST /chat/send checks (§4), every message', () => {
  const n = node();
  const good = envelope();

  it.each([
    ['not an object', [], 400, 'invalid request body'],
    ['wrong field type', { ...good, timestamp: 'now' }, 400, 'invalid request body'],
    ['missing to', { ...good, to: '' }, 400, "missing 'to' field"],
    ['missing from', { ...good, from: undefined }, 400, 'chat send requires a signed envelope (from + pub_key + signature)'],
    ['missing pub_key', { ...good, pub_key: '' }, 400, 'chat send requires a signed envelope (from + pub_key + signature)'],
    ['missing signature', { ...good, signature: '' }, 400, 'chat send requires a signed envelope (from + pub_key + signature)'],
    ['message too long', { ...good, message: 'x'.repeat(8193) }, 400, 'message exceeds maximum length of 8192 bytes'],
    ['empty message', { ...good, message: '' }, 400, 'invalid envelope: missing required fields'],
    ['timestamp 0', { ...good, timestamp: 0n }, 400, 'invalid envelope: missing required fields'],
    ['malformed to', { ...good, to: 'ab' }, 400, 'invalid envelope: malformed address or key'],
    ['stale', envelope(dev6, dev7, 'old', T - 300_000_000_001n), 400, 'invalid envelope: envelope timestamp outside freshness window'],
    ['id mismatch', { ...good, message: 'tampered' }, 400, 'invalid envelope: envelope ID mismatch'],
    ['foreign key', envelope({ ...dev6, publicKey: dev8.publicKey, seed: dev8.seed }), 400, `invalid envelope: envelope key: public key does not derive account ${dev6.address}`],
    ['signature hex', { ...good, signature: 'xyz' }, 400, 'invalid envelope: invalid signature hex'],
    ['bad signature', { ...good, signature: 'ab'.repeat(64) }, 400, 'invalid envelope: signature verification failed'],
    ['unregistered recipient', good, 404, 'recipient not found in directory'],
  ] as const)('%s', async (_name, body, status, message) => {
    expect((await sendError(n, body)).slice(0, 2)).toEqual([status, message]);
  });

  it('insufficient proof of work at the node difficulty', async () => {
    const strict = node();
    const e = envelope();
    const hard = new ChatService({
      store: strict.store,
      quotas: new IntakeQuotas(strict.clock.nowMs),
      directory: strict.directory,
      network: strict.network,
      bindings: strict.bindings,
      now: strict.clock.now,
      difficulty: 0xffffc00000000000n,
    });
    try {
      await hard.send(e as never);
      throw new Error('expected rejection');
    } catch (err) {
      expect((err as ChatError).message).toBe('invalid envelope: insufficient proof of work');
    }
  });

  it('a registration naming an invalid peer id counts as absent', async () => {
    const m = node();
    register(m, dev7, 'not-a-peer-id');
    expect(await sendError(m, envelope())).toEqual([404, 'recipient not found in directory', undefined]);
  });

  it('an expired registration counts as absent', async () => {
    const m = node();
    register(m, dev7, SELF_PEER);
    m.clock.advance(1_800_000_000_001n);
    expect((await sendError(m, envelope(dev6, dev7, 'late', m.clock.ns))).slice(0, 2)).toEqual([404, 'recipient not found in directory']);
  });
});

describe('store or relay', () => {
  it('stores locally when the recipient is registered here; a second send is a duplicate', async () => {
    const n = node();
    register(n, dev7, SELF_PEER);
    const e = envelope();
    expect(await n.chat.send(e as never)).toBe(e.id);
    expect(n.store.messages(dev7.address, 0n).map((x) => x.id)).toEqual([e.id]);
    expect(n.store.messages(dev6.address, 0n).map((x) => x.id)).toEqual([e.id]);
    expect((await sendError(n, e)).slice(0, 2)).toEqual([400, 'duplicate envelope']);
    // the verified envelope taught the node dev6's key (§5.4)
    expect(n.bindings.publicKeyOf(dev6.address)).toBe(dev6.publicKey);
  });

  it('relays to the recipient node; keeps a copy only as the sender’s directory node', async () => {
    const net = new RecordingNetwork(SELF_PEER);
    const n = node(net);
    register(n, dev7, OTHER_PEER);
    const e1 = envelope();
    expect(await n.chat.send(e1 as never)).toBe(e1.id);
    expect(net.sentChats).toEqual([{ peer: OTHER_PEER, envelope: e1 }]);
    expect(n.store.accounts()).toEqual([]); // directory node of neither party: no copy

    register(n, dev6, SELF_PEER);
    const e2 = envelope(dev6, dev7, 'second');
    await n.chat.send(e2 as never);
    expect(n.store.messages(dev6.address, 0n).map((x) => x.id)).toEqual([e2.id]);
    expect((await sendError(n, e2)).slice(0, 2)).toEqual([400, 'duplicate envelope']);
  });

  it('any relay failure answers 502 send chat: <error>', async () => {
    const net = new RecordingNetwork(SELF_PEER);
    const n = node(net);
    register(n, dev7, OTHER_PEER);
    net.relayError = new NetworkError('msg account_chat: envelope verification failed: insufficient proof of work', 'refused');
    expect((await sendError(n, envelope())).slice(0, 2)).toEqual([
      502,
      'send chat: msg account_chat: envelope verification failed: insufficient proof of work',
    ]);
  });

  it('the peerless LocalNetwork fails relays as an unreachable peer', async () => {
    const n = node(new LocalNetwork(SELF_PEER));
    register(n, dev7, OTHER_PEER);
    const [status, message] = await sendError(n, envelope());
    expect(status).toBe(502);
    expect(message).toBe(
      `send chat: msg: open stream to ${OTHER_PEER}: peer not reachable: peer-to-peer networking is not enabled on this node`,
    );
  });
});

describe('intake quotas (§4 step 6)', () => {
  it('60 per minute per sender → 429 sender quota exceeded with Retry-After', async () => {
    const n = node();
    register(n, dev7, SELF_PEER);
    for (let i = 0; i < 60; i++) await n.chat.send(envelope(dev6, dev7, `m${i}`) as never);
    const [status, message, retry] = await sendError(n, envelope(dev6, dev7, 'm60'));
    expect([status, message]).toEqual([429, 'sender quota exceeded']);
    expect(retry).toBeGreaterThanOrEqual(1);
    n.clock.advance(60_000_000_000n);
    await n.chat.send(envelope(dev6, dev7, 'after a minute', n.clock.ns) as never);
  });

  it('120 per minute per recipient → 429 recipient quota exceeded', async () => {
    const n = node(undefined, { perSenderPerMinute: 1000, perRecipientPerMinute: 3, totalPerSecond: 100 });
    register(n, dev7, SELF_PEER);
    for (let i = 0; i < 3; i++) await n.chat.send(envelope(dev6, dev7, `m${i}`) as never);
    expect((await sendError(n, envelope(dev8, dev7, 'x'))).slice(0, 2)).toEqual([429, 'recipient quota exceeded']);
  });

  it('100 per second in all → 503 chat intake busy, Retry-After 1', async () => {
    const n = node(undefined, { perSenderPerMinute: 1000, perRecipientPerMinute: 1000, totalPerSecond: 2 });
    register(n, dev7, SELF_PEER);
    await n.chat.send(envelope(dev6, dev7, 'a') as never);
    await n.chat.send(envelope(dev6, dev7, 'b') as never);
    expect(await sendError(n, envelope(dev6, dev7, 'c'))).toEqual([503, 'chat intake busy', 1]);
  });

  it('default limits: 120 per recipient per minute, 100 per second in all', async () => {
    const n = node();
    register(n, dev7, SELF_PEER);
    // 2 senders × 60, paced at 50 per second, fill dev7's 120 per minute
    for (const from of [devKey(2), devKey(3)]) {
      for (let i = 0; i < 60; i++) {
        n.clock.advance(20_000_000n);
        await n.chat.send(envelope(from, dev7, `m${i}`, n.clock.ns) as never);
      }
    }
    expect((await sendError(n, envelope(devKey(4), dev7, 'x', n.clock.ns))).slice(0, 2)).toEqual([429, 'recipient quota exceeded']);

    const burst = node();
    register(burst, dev7, SELF_PEER);
    register(burst, dev8, SELF_PEER);
    for (const [from, to] of [[devKey(2), dev7], [devKey(3), dev8]] as const) {
      for (let i = 0; i < 50; i++) await burst.chat.send(envelope(from, to, `b${i}`) as never);
    }
    expect(await sendError(burst, envelope(devKey(4), dev8, 'over'))).toEqual([503, 'chat intake busy', 1]);
  });
});

describe('receiving a relay (§4.1)', () => {
  function refusal(n: Node, payload: unknown): string {
    try {
      n.chat.receiveRelayed(payload as never);
    } catch (e) {
      if (e instanceof RelayRefusal || e instanceof ChatError) return e.message;
      throw e;
    }
    throw new Error('expected a refusal');
  }

  it('stores it when this node serves the recipient; refuses with the documented messages', () => {
    const n = node();
    const e = envelope();
    expect(refusal(n, 'x')).toBe('invalid chat envelope: envelope must be a JSON object');
    expect(refusal(n, { ...e, message: 'changed' })).toBe('envelope verification failed: envelope ID mismatch');
    expect(refusal(n, e)).toBe('recipient is not registered on this node');
    register(n, dev7, SELF_PEER);
    n.chat.receiveRelayed(e as never);
    expect(n.store.messages(dev7.address, 0n)).toHaveLength(1);
    expect(refusal(n, e)).toBe('duplicate envelope');
  });
});
