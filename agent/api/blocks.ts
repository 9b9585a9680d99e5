// Block routes (api.md §4): submission of every submittable type, the recent-blocks snapshot and
// blocks by hash.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { BodyShapeError, blockJsonText, blockToJson, parseBlockJson } from '../../ledger/codec/block.js';
import { LedgerError } from '../../ledger/errors.js';
import type { LedgerService } from '../../ledger/service.js';
import type { Block, BlockType } from '../../ledger/types.js';
import { IntakeBusyError, type BlockSubmitter } from '../intake/block-intake.js';
import { HttpError, INVALID_BODY, hasQuery, hexPathParam, intQuery, sendJson, sendJsonText } from './http.js';
import type { Route } from './route.js';

/** Submission routes in manifest order (api.md §3 rows 18–29). */
export const SUBMISSION_ORDER: readonly BlockType[] = [
  'send',
  'receive',
  'lease',
  'lease_accept',
  'lease_settle',
  'lease_cancel',
  'lease_force_settle',
  'lease_renew',
  'multisig_open',
  'multisig_update',
  'burn',
  'mint',
];

export const RECENT_CACHE_SIZE = 1000;
const RECENT_DEFAULT_LIMIT = 100;

interface RecentEntry {
  timestamp: bigint;
  json: string;
}

/** The newest blocks across all accounts, rebuilt at most once per `ttlMs` (api.md §4.2). */
export class RecentBlocks {
  private entries: RecentEntry[] = [];
  private builtAt = -Infinity;

  constructor(
    private readonly ledger: Pick<LedgerService, 'newestBlocks'>,
    private readonly ttlMs = 1000,
  ) {}

  snapshot(nowMs = Date.now()): readonly RecentEntry[] {
    if (nowMs - this.builtAt >= this.ttlMs) {
      this.entries = this.ledger
        .newestBlocks(RECENT_CACHE_SIZE)
        .map((b) => ({ timestamp: b.timestamp, json: blockJsonText(b) }));
      this.builtAt = nowMs;
    }
    return this.entries;
  }
}

export interface BlockRouteDeps {
  ledger: LedgerService;
  /** Submissions go through the batching intake (worker-checked signatures, group commit). */
  intake: BlockSubmitter;
  /** Announce a block that changed this node's state (gossip); never called for a duplicate. */
  publish: (block: Block) => void;
}

/** `{"error":"block rejected: …","retryable":b}`: 503 + Retry-After when retryable, else 400. */
export function rejection(err: LedgerError): HttpError {
  const retryable = err.retryable('live');
  return new HttpError(retryable ? 503 : 400, `block rejected: ${err.message}`, retryable ? { 'Retry-After': '1' } : {}, retryable);
}

function decodeBlock(body: unknown, type: BlockType): Block {
  let block: Block;
  try {
    block = parseBlockJson(body as never);
  } catch (err) {
    if (err instanceof BodyShapeError) throw new HttpError(400, INVALID_BODY);
    // A missing, malformed or unknown `type` cannot equal the path's type.
    if (err instanceof LedgerError) throw new HttpError(400, 'block type mismatch');
    throw err;
  }
  if (block.type !== type) throw new HttpError(400, 'block type mismatch');
  return block;
}

export function blockRoutes(deps: BlockRouteDeps): { recent: Route; byHash: Route; submit: Route[] } {
  const { ledger, intake, publish } = deps;
  const recent = new RecentBlocks(ledger);

  const submit = (type: BlockType): Route => ({
    method: 'POST',
    path: `/blocks/${type}`,
    description: `Submit a signed ${type} block${type === 'burn' ? ' (XE only)' : type === 'mint' ? ' (authorized minter only)' : ''}`,
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const block = decodeBlock(request.body, type);
      let result;
      try {
        result = await intake.submit(block);
      } catch (err) {
        if (err instanceof LedgerError) throw rejection(err);
        if (err instanceof IntakeBusyError) throw new HttpError(503, `block rejected: ${err.message}`, { 'Retry-After': '1' }, true);
        throw err;
      }
      if (result.status === 'applied') publish(result.block);
      return sendJsonText(reply, 201, blockJsonText(result.block));
    },
  });

  return {
    recent: {
      method: 'GET',
      path: '/blocks/recent',
      description: 'Newest blocks across all accounts',
      handler: (request, reply) => {
        const n = intQuery(request, 'limit');
        const limit = n === undefined || n <= 0n ? RECENT_DEFAULT_LIMIT : n > 1000n ? 1000 : Number(n);
        // Absent `since` filters nothing; present but unparseable counts as 0 (api.md §1).
        const since = hasQuery(request, 'since') ? (intQuery(request, 'since') ?? 0n) : null;
        const out: string[] = [];
        for (const e of recent.snapshot()) {
          if (out.length >= limit) break;
          if (since === null || e.timestamp > since) out.push(e.json);
        }
        return sendJsonText(reply, 200, `[${out.join(',')}]`);
      },
    },
    byHash: {
      method: 'GET',
      path: '/blocks/{hash}',
      description: 'A block by hash',
      handler: (request, reply) => {
        const hash = hexPathParam(request, 'hash', 'invalid hash');
        const found = ledger.getBlock(hash);
        if (!found) throw new HttpError(404, 'block not found');
        return sendJson(reply, 200, blockToJson(found.block, { finalized: found.finalized }));
      },
    },
    submit: SUBMISSION_ORDER.map(submit),
  };
}
