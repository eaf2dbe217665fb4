// The egress keeps connections alive per destination and vetted address set: a second request reuses the first's
// connection, a name that resolves elsewhere gets a connection of its own, and a kept-alive connection the server
// dropped is retried once on a fresh one for an idempotent method only.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { access, get, localEgress, lookupOf, never, rejection, text } from './servers.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** An HTTP server on `host` counting the connections it accepted. */
async function countingServer(host: string, port = 0): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = createHttpServer((req, res) => res.end(`${host} ${req.method ?? ''}`));
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

describe('egress keep-alive', () => {
  it('sends sequential requests to one destination over one connection', async () => {
    const server = await countingServer('127.0.0.1');
    const egress = localEgress();
    const url = `http://127.0.0.1:${server.port}/`;
    for (let i = 0; i < 5; i++) {
      const response = await egress.fetch(get(url), access([`127.0.0.1:${server.port}`]), {
        signal: never(),
      });
      expect(text(response.body)).toBe('127.0.0.1 GET');
    }
    expect(server.connections()).toBe(1);
  });

  it('never reuses a connection for a name that now resolves to another address', async () => {
    const first = await countingServer('127.0.0.1');
    const second = await countingServer('127.0.0.2', first.port);
    const table: Record<string, string> = { 'api.test': '127.0.0.1' };
    const egress = localEgress({ lookup: lookupOf(table) });
    const url = `http://api.test:${first.port}/`;
    const allow = access([`api.test:${first.port}`]);
    expect(text((await egress.fetch(get(url), allow, { signal: never() })).body)).toBe('127.0.0.1 GET');
    table['api.test'] = '127.0.0.2';
    expect(text((await egress.fetch(get(url), allow, { signal: never() })).body)).toBe('127.0.0.2 GET');
    expect([first.connections(), second.connections()]).toEqual([1, 1]);
  });

  /** Answers the first request of each connection with keep-alive, and resets the connection at its second. */
  async function droppingServer(): Promise<{ port: number; requests: string[] }> {
    const requests: string[] = [];
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      let answered = 0;
      let buffered = '';
      socket.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('latin1');
        while (buffered.includes('\r\n\r\n')) {
          const end = buffered.indexOf('\r\n\r\n') + 4;
          const head = buffered.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buffered.length < end + length) return;
          buffered = buffered.slice(end + length);
          if (answered > 0) {
            socket.resetAndDestroy();
            return;
          }
          answered += 1;
          requests.push(head.slice(0, head.indexOf(' ')));
          socket.write(
            'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=30\r\n\r\nok',
          );
        }
      });
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    );
    return { port: (server.address() as AddressInfo).port, requests };
  }

  it('sends a GET again on a fresh connection when the kept-alive one was dropped', async () => {
    const server = await droppingServer();
    const egress = localEgress();
    const url = `http://127.0.0.1:${server.port}/`;
    const allow = access([`127.0.0.1:${server.port}`]);
    await egress.fetch(get(url), allow, { signal: never() });
    const again = await egress.fetch(get(url), allow, { signal: never() });
    expect(text(again.body)).toBe('ok');
    expect(server.requests).toEqual(['GET', 'GET']);
  });

  it('does not send a POST again: it fails as a connection failure', async () => {
    const server = await droppingServer();
    const egress = localEgress();
    const url = `http://127.0.0.1:${server.port}/`;
    const allow = access([`127.0.0.1:${server.port}`]);
    await egress.fetch(get(url), allow, { signal: never() });
    const post = get(url, { method: 'POST', body: Buffer.from('x').toString('base64') });
    const error = await rejection(egress.fetch(post, allow, { signal: never() }));
    expect(error.code).toBe('EGRESS_FAILED');
    expect(server.requests).toEqual(['GET']);
  });
});
