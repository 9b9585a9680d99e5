// Response writes coalesced per event-loop turn (agent/api/write-coalescing.ts), on a real HTTP
// server and raw TCP clients.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, Socket, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { coalesceWrites } from '../../agent/api/write-coalescing.js';

let server: Server | undefined;
/** The server side of every connection. */
const serverSockets = new Set<Socket>();
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose sockets coalesce; `respond` decides when to answer the requests seen so far. */
async function listen(respond: (pending: [IncomingMessage, ServerResponse][]) => void): Promise<number> {
  const pending: [IncomingMessage, ServerResponse][] = [];
  server = createServer((req, res) => {
    pending.push([req, res]);
    respond(pending);
  });
  server.on('connection', (socket: Socket) => {
    serverSockets.add(socket);
    expect(coalesceWrites(socket)).not.toBeNull();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Send `text` on a fresh connection; resolves with everything received until the server closes. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connect(port, '127.0.0.1', () => client.write(text));
    let got = '';
    client.on('data', (d: Buffer) => (got += d.toString('latin1')));
    client.on('end', () => resolve(got));
    client.on('error', reject);
  });
}

const get = (path: string, last = false) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;

describe('coalesceWrites', () => {
  it('sends the answers to pipelined requests made ready in one turn as one write, in order', async () => {
    const writes = vi.spyOn(Socket.prototype as unknown as { _writeGeneric: () => void }, '_writeGeneric');
    const port = await listen((pending) => {
      if (pending.length < 3) return;
      for (const [req, res] of pending) res.end(`answer to ${req.url}`);
    });
    const got = await exchange(port, get('/a') + get('/b') + get('/c', true));

    expect(got.match(/answer to \/\w/g)).toEqual(['answer to /a', 'answer to /b', 'answer to /c']);
    expect(got.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    // The client's own write goes through the same method: count the server side only.
    expect(writes.mock.contexts.filter((socket) => serverSockets.has(socket as Socket))).toHaveLength(1);
  });

  it('still answers a request the parser refuses before closing (destroy sends held bytes)', async () => {
    const port = await listen(() => {});
    const got = await exchange(port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request/);
  });

  it('after release, writes go to the socket at once', async () => {
    const writes = vi.spyOn(Socket.prototype as unknown as { _writeGeneric: () => void }, '_writeGeneric');
    const writesBy = (socket: Socket) => writes.mock.contexts.filter((c) => c === socket).length;
    server = createServer();
    const counts = new Promise<number[]>((resolve) =>
      server!.on('connection', (socket: Socket) => {
        const release = coalesceWrites(socket)!;
        socket.write('held ');
        const held = writesBy(socket);
        release(); // sends what was held, then stops coalescing
        const flushed = writesBy(socket);
        socket.write('direct');
        resolve([held, flushed, writesBy(socket)]);
        socket.end();
      }),
    );
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const got = await exchange((server.address() as AddressInfo).port, '');
    expect(await counts).toEqual([0, 1, 2]);
    expect(got).toBe('held direct');
  });
});
