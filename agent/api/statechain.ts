// State chain routes (api.md §9). Op values travel as their exact stored text.

import { BodyShapeError } from '../../ledger/codec/block.js';
import { LedgerError } from '../../ledger/errors.js';
import type { LedgerService, StatechainBlock } from '../../ledger/service.js';
import { emitStatechainBlock, statechainBlockFromJson } from '../../ledger/statechain/block.js';
import {
  HttpError,
  INVALID_BODY,
  afterParam,
  intQuery,
  jsonBody,
  pageLimit,
  pathParam,
  queryParam,
  sendJsonText,
  sendKeyPage,
} from './http.js';
import type { Route } from './route.js';
import { U64_MAX } from '../../ledger/codec/bytes.js';

const KEY_RE = /^[a-z0-9_.-]{1,128}$/;
const U64_RE = /^(0|[1-9][0-9]{0,19})$/;

/** Each op's `value` is read as its exact source text (statechain.md §2.4). */
const RAW_OP_VALUE = (p: readonly (string | number)[]): boolean => p.length === 3 && p[0] === 'ops' && p[2] === 'value';

export const isStatechainKey = (s: string): boolean => KEY_RE.test(s);

export interface StatechainRouteDeps {
  ledger: LedgerService;
  /** Gossip an applied block; never called for a duplicate. */
  publish: (block: StatechainBlock) => void;
}

export function statechainRoutes({ ledger, publish }: StatechainRouteDeps) {
  const sc = ledger.statechain;

  const tip: Route = {
    method: 'GET',
    path: '/statechain/tip',
    description: 'Newest state chain block',
    handler: (_request, reply) => {
      let block: StatechainBlock;
      try {
        block = sc.tip();
      } catch {
        throw new HttpError(404, 'no tip');
      }
      return sendJsonText(reply, 200, emitStatechainBlock(block));
    },
  };

  const blocks: Route = {
    method: 'GET',
    path: '/statechain/blocks',
    description: 'A window of state chain blocks',
    handler: (request, reply) => {
      const s = intQuery(request, 'start');
      const start = s === undefined || s < 0n ? 0n : s;
      const l = intQuery(request, 'limit');
      const limit = l === undefined || l <= 0n ? 100 : l > 1000n ? 1000 : Number(l);
      const window = sc.blocks(start, limit).map(emitStatechainBlock);
      return sendJsonText(reply, 200, `{"blocks":[${window.join(',')}],"block_count":${sc.count()}}`);
    },
  };

  const blockAt: Route = {
    method: 'GET',
    path: '/statechain/blocks/{index}',
    description: 'A state chain block by index',
    handler: (request, reply) => {
      const text = pathParam(request, 'index');
      if (!U64_RE.test(text) || BigInt(text) > U64_MAX) throw new HttpError(400, 'invalid index');
      const block = sc.blockAt(BigInt(text));
      if (!block) throw new HttpError(404, 'block not found');
      return sendJsonText(reply, 200, emitStatechainBlock(block));
    },
  };

  const kv: Route = {
    method: 'GET',
    path: '/statechain/kv',
    description: 'State chain key-value map, optionally by prefix',
    handler: (request, reply) => {
      const after = afterParam(request, isStatechainKey);
      const page = sc.kv(queryParam(request, 'prefix') ?? '', after, pageLimit(request));
      return sendKeyPage(reply, page.entries, page.nextAfter);
    },
  };

  const kvKey: Route = {
    method: 'GET',
    path: '/statechain/kv/{key}',
    description: 'One state chain key',
    handler: (request, reply) => {
      const key = pathParam(request, 'key');
      if (!isStatechainKey(key)) throw new HttpError(400, 'invalid key');
      const value = sc.get(key);
      if (value === null) throw new HttpError(404, 'key not found');
      return sendJsonText(reply, 200, value);
    },
  };

  const keyset: Route = {
    method: 'GET',
    path: '/statechain/keyset',
    description: 'The DAO keyset',
    handler: (_request, reply) => {
      const ks = sc.daoKeyset();
      if (!ks) throw new HttpError(404, 'keyset not found');
      return sendJsonText(reply, 200, `{"keys":${JSON.stringify(ks.keys)},"threshold":${ks.threshold}}`);
    },
  };

  const submit: Route = {
    method: 'POST',
    path: '/statechain/blocks',
    description: 'Submit a state chain block',
    handler: (request, reply) => {
      let block: StatechainBlock;
      try {
        block = statechainBlockFromJson(jsonBody(request, { raw: RAW_OP_VALUE }));
      } catch (err) {
        if (err instanceof BodyShapeError) throw new HttpError(400, INVALID_BODY, {}, false);
        throw err;
      }
      let result;
      try {
        result = sc.submit(block, 'live');
      } catch (err) {
        if (!(err instanceof LedgerError)) throw err;
        const retryable = err.retryable('live');
        throw new HttpError(retryable ? 503 : 400, `block rejected: ${err.message}`, retryable ? { 'Retry-After': '1' } : {}, retryable);
      }
      if (result.status === 'applied') publish(result.block);
      return sendJsonText(reply, 201, emitStatechainBlock(result.block));
    },
  };

  return { tip, blocks, blockAt, kv, kvKey, keyset, submit };
}
