// One account acting through a node's HTTP API: reads its state, builds a block, signs it, solves
// the PoW at the node's advertised difficulty and submits it — retrying retryable rejections
// (a `previous mismatch` race, a dependency not yet there) with fresh state and progress messages.
import type { JsonValue } from '../../ledger/codec/json.js';
import { finishBlock } from '../../ledger/crypto/block-signer.js';
import { parseDifficulty } from '../../ledger/crypto/pow.js';
import { blockToJson, parseBlockJson } from '../../ledger/codec/block.js';
import type { Attestation, Block, Lease, PendingEntry, Renewal } from '../../ledger/types.js';
import { ApiError, NodeClient } from '../client/node-client.js';
import type { AccountState } from './builders.js';

export interface NodeInfo {
  networkId: string;
  difficulty: bigint;
  address: string;
}

type Obj = Record<string, JsonValue>;

function big(v: JsonValue | undefined): bigint {
  return typeof v === 'bigint' ? v : 0n;
}
function str(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : '';
}

export function decodeLease(v: JsonValue): Lease {
  const o = v as Obj;
  return {
    lease_hash: str(o.lease_hash),
    state: str(o.state) as Lease['state'],
    consumer: str(o.consumer),
    provider: str(o.provider),
    vcpus: big(o.vcpus),
    memory_mb: big(o.memory_mb),
    disk_gb: big(o.disk_gb),
    duration: big(o.duration),
    access_pub_key: str(o.access_pub_key),
    cost: big(o.cost),
    stake: big(o.stake),
    start_time: big(o.start_time),
    certificate_hash: str(o.certificate_hash),
    settled: o.settled === true,
    locked_r: big(o.locked_r),
    locked_payout_cap: big(o.locked_payout_cap),
    locked_twap_milli: big(o.locked_twap_milli),
    renewals: ((o.renewals as JsonValue[] | undefined) ?? []).map((r) => {
      const x = r as Obj;
      return {
        renew_hash: str(x.renew_hash),
        duration: big(x.duration),
        cost: big(x.cost),
        start_time: big(x.start_time),
        locked_r: big(x.locked_r),
        locked_payout_cap: big(x.locked_payout_cap),
        locked_twap_milli: big(x.locked_twap_milli),
      } satisfies Renewal;
    }),
    effective_duration: big(o.effective_duration),
    expires_at: big(o.expires_at),
  };
}

export function decodePending(v: JsonValue): PendingEntry {
  const o = v as Obj;
  return {
    send_hash: str(o.send_hash),
    source: str(o.source),
    destination: str(o.destination),
    amount: big(o.amount),
    asset: str(o.asset),
    timestamp: big(o.timestamp),
  };
}

export function decodeAttestation(v: JsonValue): Attestation {
  const o = v as Obj;
  return { public_key: str(o.public_key), timestamp: big(o.timestamp), signature: str(o.signature) };
}

export class AccountClient {
  private info?: NodeInfo;

  constructor(
    readonly node: NodeClient,
    private readonly seed: Uint8Array,
    readonly address: string,
    readonly publicKey: string,
    private readonly progress: (message: string) => void = () => {},
  ) {}

  async nodeInfo(): Promise<NodeInfo> {
    if (!this.info) {
      const n = (await this.node.get('/node')) as Obj;
      this.info = { networkId: str(n.network_id), difficulty: parseDifficulty(str(n.pow_difficulty) || '0'), address: str(n.address) };
    }
    return this.info;
  }

  async state(): Promise<AccountState> {
    const head = (await this.node.get(`/accounts/${this.address}/chain?limit=1`)) as Obj;
    const total = Number(big(head.total));
    let frontier: string | null = null;
    if (total > 0) {
      const last = (await this.node.get(`/accounts/${this.address}/chain?offset=${total - 1}&limit=1`)) as Obj;
      frontier = str(((last.blocks as JsonValue[])[0] as Obj).hash);
    }
    const bal = (await this.node.get(`/accounts/${this.address}/balance`)) as Obj;
    const balances: Record<string, bigint> = {};
    for (const [asset, amount] of Object.entries((bal.balances as Obj) ?? {})) balances[asset] = big(amount);
    return { address: this.address, publicKey: this.publicKey, frontier, balances };
  }

  async lease(hash: string): Promise<Lease> {
    return decodeLease(await this.node.get(`/leases/${hash}`));
  }

  async pending(): Promise<PendingEntry[]> {
    const r = (await this.node.get(`/pending/${this.address}`)) as Obj;
    return ((r.pending as JsonValue[]) ?? []).map(decodePending);
  }

  /**
   * Build (from fresh account state), finish and submit one block; retryable rejections are retried
   * with backoff for up to `patienceMs`, rebuilding each time so a moved frontier is picked up.
   */
  async submit(build: (st: AccountState) => Block | Promise<Block>, patienceMs = 60_000): Promise<Block> {
    const info = await this.nodeInfo();
    const deadline = Date.now() + patienceMs;
    let delay = 250;
    for (;;) {
      const block = finishBlock(await build(await this.state()), { networkId: info.networkId, difficulty: info.difficulty, seed: this.seed });
      try {
        return parseBlockJson(await this.node.post(`/blocks/${block.type}`, blockToJson(block)));
      } catch (err) {
        if (!(err instanceof ApiError) || !err.retryable || Date.now() + delay > deadline) throw err;
        this.progress(`${block.type}: ${err.message} — retrying in ${(delay / 1000).toFixed(1)} s`);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }
}
