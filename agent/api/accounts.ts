// Account reads (api.md §5): the account list, balances, chains, keysets and reputation.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { blockToJson } from '../../ledger/codec/block.js';
import { isHash } from '../../ledger/codec/hex.js';
import { stringifyJson } from '../../ledger/codec/json.js';
import type { ChainBlock, LedgerService } from '../../ledger/service.js';
import {
  HttpError,
  afterParam,
  hexPathParam,
  jsonArrayChunks,
  pageLimit,
  pageOffset,
  pagesOf,
  pagingRequested,
  sendJson,
  sendJsonStream,
  sendKeyPage,
  wrapChunks,
} from './http.js';
import type { Route } from './route.js';

const STREAM_PAGE = 1000;

export interface AccountRouteDeps {
  ledger: LedgerService;
}

const chainItem = (c: ChainBlock): string => stringifyJson(blockToJson(c.block, { finalized: c.finalized }));

export function accountRoutes({ ledger }: AccountRouteDeps) {
  const address = (request: FastifyRequest): string => hexPathParam(request, 'address', 'invalid address');

  const list: Route = {
    method: 'GET',
    path: '/accounts',
    description: 'Every known account with frontier and block count',
    handler: (request, reply) => {
      if (pagingRequested(request)) return sendJson(reply, 200, ledger.accounts(pageOffset(request), pageLimit(request)));
      return sendJsonStream(reply, jsonArrayChunks(pagesOf((o, l) => ledger.accounts(o, l), STREAM_PAGE)));
    },
  };

  const balance: Route = {
    method: 'GET',
    path: '/accounts/{address}/balance',
    description: 'Per-asset balances of an account',
    handler: (request, reply) => sendJson(reply, 200, ledger.balances(address(request))),
  };

  const chain: Route = {
    method: 'GET',
    path: '/accounts/{address}/chain',
    description: "An account's chain, oldest first",
    handler: (request: FastifyRequest, reply: FastifyReply) => {
      const a = address(request);
      if (pagingRequested(request)) {
        const { total, blocks } = ledger.accountChain(a, pageOffset(request), pageLimit(request));
        return sendJsonStream(reply, wrapChunks(`{"address":"${a}","total":${total},"blocks":`, jsonArrayChunks([blocks], chainItem), '}'));
      }
      const first = ledger.accountChain(a, 0, STREAM_PAGE);
      function* pages(): Generator<ChainBlock[]> {
        yield first.blocks;
        if (first.blocks.length < STREAM_PAGE) return;
        for (let offset = STREAM_PAGE; ; offset += STREAM_PAGE) {
          const page = ledger.accountChain(a, offset, STREAM_PAGE).blocks;
          yield page;
          if (page.length < STREAM_PAGE) return;
        }
      }
      return sendJsonStream(reply, wrapChunks(`{"address":"${a}","total":${first.total},"blocks":`, jsonArrayChunks(pages(), chainItem), '}'));
    },
  };

  const keyset: Route = {
    method: 'GET',
    path: '/accounts/{address}/keyset',
    description: 'Multisig keyset of an account',
    handler: (request, reply) => {
      const ks = ledger.keyset(address(request));
      if (!ks) throw new HttpError(404, 'not a multisig account');
      return sendJson(reply, 200, { keys: ks.keys, threshold: ks.threshold });
    },
  };

  const reputation: Route = {
    method: 'GET',
    path: '/accounts/{address}/reputation',
    description: 'Reputation aggregate of an account (node-local, best effort)',
    handler: (request, reply) => {
      const r = ledger.reputation(address(request));
      if (!r) throw new HttpError(404, 'no reputation activity');
      return sendJson(reply, 200, r);
    },
  };

  const reputations: Route = {
    method: 'GET',
    path: '/reputation',
    description: 'Reputation aggregates of every known account',
    handler: (request, reply) => {
      const page = ledger.reputations(afterParam(request, isHash), pageLimit(request));
      return sendKeyPage(reply, page.entries, page.nextAfter);
    },
  };

  return { list, balance, chain, keyset, reputation, reputations };
}
