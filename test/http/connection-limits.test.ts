import { afterEach, describe, expect, it } from 'vitest';
import { listenFirst } from '../../src/http/listen-first.ts';
import type { ConnectionOptions, EarlyListener } from '../../src/http/listen-first.ts';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';
import { after, lastBody, rawClient } from './raw-socket.ts';
import type { RawClient } from './raw-socket.ts';

// Issue 17 item 5: a client that trickles, idles or piles up connections costs a bounded amount and is dropped.
// The real API behind the real listener (listenFirst, as `codecall serve` binds it), raw sockets as clients.

const SMALL: ConnectionOptions = {
  requestTimeoutMs: 800,
  headersTimeoutMs: 400,
  keepAliveTimeoutMs: 300,
  maxConnections: 100,
  maxConnectionsPerIp: 100,
};

describe('connection limits', () => {
  const fx = useApiFixture('http-connection-limits');
  const listeners: EarlyListener[] = [];
  const clients: RawClient[] = [];
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.socket.destroy());
    await Promise.all(listeners.splice(0).map((l) => l.close()));
  });

  async function serve(limits: Partial<ConnectionOptions> = {}): Promise<string> {
    const listener = await listenFirst({ port: 0, host: '127.0.0.1', limits: { ...SMALL, ...limits } });
    listener.serve((req, res) => fx.app.routing(req, res));
    listeners.push(listener);
    return listener.address;
  }
  async function client(address: string): Promise<RawClient> {
    const c = await rawClient(address);
    clients.push(c);
    return c;
  }
  /** Sends `bytes` one at a time, `ms` apart, while the socket is open. */
  function trickle(c: RawClient, bytes: string, ms: number): void {
    let i = 0;
    const timer = setInterval(() => {
      if (i >= bytes.length || c.socket.destroyed) return clearInterval(timer);
      c.socket.write(bytes[i++] ?? '');
    }, ms);
    void c.closed.then(() => clearInterval(timer));
  }
  function slowPost(c: RawClient, headers: string): void {
    c.socket.write(
      `POST /api/v1/tasks HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}content-length: 1000\r\n\r\n{`,
    );
    trickle(c, ' '.repeat(999), 100);
  }

  it('drops a trickled body after requestTimeoutMs with a 408 REQUEST_TIMEOUT, on a keep-alive connection too', async () => {
    const address = await serve();
    const key: ApiKey = await fx.key('conn-a');
    const c = await client(address);
    // A first, complete request keeps the connection alive; the second one trickles its body.
    c.socket.write(`GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n`);
    await c.until('\r\n\r\n');
    slowPost(c, `authorization: ${key.headers.authorization}\r\n`);
    const text = await Promise.race([c.closed, after(5000, 'still open')]);
    expect(text).not.toBe('still open');
    expect(text).toContain('408 Request Timeout');
    expect(lastBody(text)).toMatchObject({ error: { code: 'REQUEST_TIMEOUT' } });
  });

  it('drops a trickled body of an unauthenticated request', async () => {
    const address = await serve();
    const c = await client(address);
    slowPost(c, '');
    const text = await Promise.race([c.closed, after(5000, 'still open')]);
    expect(text).not.toBe('still open');
  });

  it('drops trickled headers after headersTimeoutMs', async () => {
    const address = await serve();
    const c = await client(address);
    c.socket.write('GET /healthz HTTP/1.1\r\n');
    trickle(c, 'x-slow: ' + 'a'.repeat(500), 50);
    const text = await Promise.race([c.closed, after(4000, 'still open')]);
    expect(text).not.toBe('still open');
    expect(text).toContain('408 Request Timeout');
    expect(lastBody(text)).toMatchObject({ error: { code: 'REQUEST_TIMEOUT' } });
  });

  it('closes an idle keep-alive connection after keepAliveTimeoutMs', async () => {
    const address = await serve({ requestTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
    const c = await client(address);
    c.socket.write(`GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n`);
    await c.until('\r\n\r\n');
    const text = await Promise.race([c.closed, after(4000, 'still open')]);
    expect(text).not.toBe('still open');
    expect(text).toContain('200 OK');
  });

  it('refuses a connection over maxConnectionsPerIp with 503 TOO_MANY_CONNECTIONS, and takes one again once a socket closes', async () => {
    const address = await serve({
      maxConnectionsPerIp: 3,
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 60_000,
    });
    const held = [await client(address), await client(address), await client(address)];
    const over = await client(address);
    const refused = await Promise.race([over.closed, after(4000, 'still open')]);
    expect(refused).toContain('503 Service Unavailable');
    expect(refused.toLowerCase()).toContain('retry-after: 1');
    expect(lastBody(refused)).toMatchObject({ error: { code: 'TOO_MANY_CONNECTIONS' } });
    held[0]?.socket.destroy();
    await held[0]?.closed;
    await after(100, null);
    const again = await client(address);
    again.socket.write(`GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n`);
    expect(await again.until('\r\n\r\n')).toContain('200 OK');
  });

  it('refuses a connection over maxConnections', async () => {
    const address = await serve({ maxConnections: 2, requestTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
    await client(address);
    await client(address);
    const over = await client(address);
    const refused = await Promise.race([over.closed, after(4000, 'still open')]);
    expect(lastBody(refused)).toMatchObject({ error: { code: 'TOO_MANY_CONNECTIONS' } });
  });

  it('keeps an SSE stream open past requestTimeoutMs, and counts it toward the per-IP cap', async () => {
    const address = await serve({ maxConnectionsPerIp: 1, keepAliveTimeoutMs: 300 });
    const key = await fx.key('conn-stream');
    const stream = await client(address);
    stream.socket.write(
      `GET /api/v1/task-events HTTP/1.1\r\nhost: x\r\nauthorization: ${key.headers.authorization}\r\n\r\n`,
    );
    expect(await stream.until('\r\n\r\n')).toContain('text/event-stream');
    // Three request timeouts later the stream is still open.
    expect(await Promise.race([stream.closed.then(() => 'closed'), after(2500, 'open')])).toBe('open');
    const over = await client(address);
    const refused = await Promise.race([over.closed, after(4000, 'still open')]);
    expect(lastBody(refused)).toMatchObject({ error: { code: 'TOO_MANY_CONNECTIONS' } });
  });

  it("answers a request whose handling takes longer than requestTimeoutMs (the quiet is the server's, not the client's)", async () => {
    const listener = await listenFirst({ port: 0, host: '127.0.0.1', limits: SMALL });
    listeners.push(listener);
    listener.serve((req, res) => {
      req.resume();
      req.on('end', () => setTimeout(() => res.end('done'), SMALL.requestTimeoutMs * 2.5));
    });
    const res = await fetch(`${listener.address}/slow`, { method: 'POST', body: 'x'.repeat(64) });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('done');
  });

  it('drops a client that stops reading its answers (pipelined requests) after requestTimeoutMs without progress', async () => {
    const address = await serve();
    const c = await client(address);
    // Answers of megabytes in all, never read: without a bound the connection (and what it holds) stays forever.
    c.socket.write('GET /api/v1/openapi.json HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(200));
    c.socket.pause();
    // A paused socket does not see its close: look again after the bound, reading what came.
    await new Promise((r) => setTimeout(r, SMALL.requestTimeoutMs + 1500));
    c.socket.resume();
    expect(await Promise.race([c.closed.then(() => 'closed'), after(3000, 'still open')])).toBe('closed');
    // Dropped with answers unsent, not closed after sending them all.
    expect(c.text().split('HTTP/1.1 200').length - 1).toBeLessThan(200);
  });
});
