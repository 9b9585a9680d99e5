// Directory routes (api.md §10, chat-and-directory.md §8).
import { isLowerHex } from '../../ledger/codec/hex.js';
import { RegistrationError, type DirectoryService } from '../directory/service.js';
import { registrationToJson } from '../directory/registration.js';
import { afterParam, hexPathParam, HttpError, pageLimit, sendJson } from './http.js';
import type { Route } from './route.js';

export interface DirectoryRouteDeps {
  directory: DirectoryService;
}

export function directoryRoutes({ directory }: DirectoryRouteDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/directory',
      description: 'Directory registrations (account → peer)',
      handler: (request, reply) => {
        const after = afterParam(request, (s) => isLowerHex(s, 64));
        const page = directory.list(after, pageLimit(request));
        if (page.nextAfter !== undefined) reply.header('X-Next-After', page.nextAfter);
        return sendJson(reply, 200, page.records.map(registrationToJson));
      },
    },
    {
      method: 'GET',
      path: '/directory/{account}',
      description: 'Directory registration of one account',
      handler: (request) => {
        const account = hexPathParam(request, 'account', 'invalid account');
        const record = directory.lookup(account);
        if (!record) throw new HttpError(404, 'account not found in directory');
        return registrationToJson(record);
      },
    },
    {
      method: 'POST',
      path: '/directory/register',
      description: 'Register an account in the directory',
      handler: (request) => {
        try {
          directory.register(request.body as never, 'api');
        } catch (err) {
          if (err instanceof RegistrationError) throw new HttpError(400, err.message);
          throw err;
        }
        return { ok: true };
      },
    },
  ];
}
