// Bounds on one request: the response body (never held past its limit), the request body, headers, time, abort.
import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { access, get, localEgress, never, rejection, startServer, text } from './servers.ts';

const MB = 1024 * 1024;

describe('egress limits', () => {
  it('stops reading a 50 MB stream at max_bytes, closes the connection and fails at once', async () => {
    let written = 0;
    let closed = false;
    const server = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = (): void => {
        while (!closed && written < 50 * MB) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!closed) res.end();
      };
      req.socket.on('close', () => (closed = true));
      pump();
    });
    const started = Date.now();
    const error = await rejection(
      localEgress().fetch(get(server.url()), access([`127.0.0.1:${server.port}`], { maxBytes: MB }), {
        signal: never(),
      }),
    );
    expect(error).toMatchObject({ code: 'EGRESS_LIMIT', details: { limit: 'max_bytes', max: MB } });
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => closed).toBe(true);
    // The server could only push what the socket buffers held past the limit, far from the 50 MB.
    expect(written).toBeLessThan(20 * MB);
  });

  it('fails before reading a body whose declared length is over the limit; a HEAD is not read', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(5000) });
      res.end(Buffer.alloc(5000));
    });
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`], { maxBytes: 1000 });
    const error = await rejection(egress.fetch(get(server.url()), allow, { signal: never() }));
    expect(error).toMatchObject({ code: 'EGRESS_LIMIT', details: { limit: 'max_bytes', max: 1000 } });
    const head = await egress.fetch(get(server.url(), { method: 'HEAD' }), allow, { signal: never() });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it("caps the task's own limit with the operator's ceiling", async () => {
    const server = await startServer((_req, res) => res.end(Buffer.alloc(2000)));
    const error = await rejection(
      localEgress({ limits: { maxBytes: 1000 } }).fetch(
        get(server.url()),
        access([`127.0.0.1:${server.port}`], { maxBytes: 10 * MB }),
        { signal: never() },
      ),
    );
    expect(error).toMatchObject({ code: 'EGRESS_LIMIT', details: { limit: 'max_bytes', max: 1000 } });
    const exact = await localEgress({ limits: { maxBytes: 2000 } }).fetch(
      get(server.url()),
      access([`127.0.0.1:${server.port}`]),
      { signal: never() },
    );
    expect(Buffer.from(exact.body, 'base64')).toHaveLength(2000);
  });

  it('refuses a request body over maxRequestBytes before sending anything', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const egress = localEgress({ limits: { maxRequestBytes: 100 } });
    const allow = access([`127.0.0.1:${server.port}`]);
    const post = (bytes: number): Promise<unknown> =>
      egress.fetch(
        { url: server.url(), method: 'POST', headers: [], body: Buffer.alloc(bytes).toString('base64') },
        allow,
        { signal: never() },
      );
    expect(await rejection(post(101))).toMatchObject({
      code: 'EGRESS_LIMIT',
      details: { limit: 'request_bytes', max: 100 },
    });
    expect(await rejection(post(10_000_000))).toMatchObject({ code: 'EGRESS_LIMIT' });
    expect(server.seen).toHaveLength(0);
    await post(100);
    expect(server.seen[0]?.body).toHaveLength(100);
  });

  it('refuses response headers over 64 KiB, and request headers too', async () => {
    const server = await startServer((_req, res) => {
      res.setHeader('x-big', 'a'.repeat(70 * 1024));
      res.end('ok');
    });
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`]);
    const response = await rejection(egress.fetch(get(server.url()), allow, { signal: never() }));
    expect(response).toMatchObject({ code: 'EGRESS_LIMIT', details: { limit: 'header_bytes' } });
    const request = await rejection(
      egress.fetch(get(server.url(), { headers: [['x-big', 'b'.repeat(70 * 1024)]] }), allow, {
        signal: never(),
      }),
    );
    expect(request).toMatchObject({ code: 'EGRESS_LIMIT', details: { limit: 'header_bytes' } });
  });

  it("times out a slow server at the task's timeout_seconds, redirects included", async () => {
    const silent = await startServer(() => undefined);
    const started = Date.now();
    const error = await rejection(
      localEgress().fetch(get(silent.url()), access([`127.0.0.1:${silent.port}`], { timeoutSeconds: 0.3 }), {
        signal: never(),
      }),
    );
    expect(error).toMatchObject({ code: 'EGRESS_TIMEOUT', details: { timeout_seconds: 0.3 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(3000);

    // Each hop answers in 150 ms: four of them do not fit in 0.4 s.
    const slowHops = await startServer((req, res) => {
      const n = Number(req.url?.slice(1) ?? 0);
      setTimeout(() => (n < 3 ? res.writeHead(302, { location: `/${n + 1}` }).end() : res.end('done')), 150);
    });
    const chain = await rejection(
      localEgress().fetch(
        get(slowHops.url('/0')),
        access([`127.0.0.1:${slowHops.port}`], { timeoutSeconds: 0.4 }),
        {
          signal: never(),
        },
      ),
    );
    expect(chain.code).toBe('EGRESS_TIMEOUT');
  });

  it("caps the task's timeout with the operator's ceiling", async () => {
    const silent = await startServer(() => undefined);
    const started = Date.now();
    const error = await rejection(
      localEgress({ limits: { timeoutSeconds: 0.2 } }).fetch(
        get(silent.url()),
        access([`127.0.0.1:${silent.port}`], { timeoutSeconds: 60 }),
        { signal: never() },
      ),
    );
    expect(error.code).toBe('EGRESS_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("takes the request's own timeoutSeconds when it is the shortest, and refuses a bad one", async () => {
    const silent = await startServer(() => undefined);
    const to = access([`127.0.0.1:${silent.port}`], { timeoutSeconds: 30 });
    const own = await rejection(
      localEgress().fetch({ ...get(silent.url()), timeoutSeconds: 0.2 }, to, { signal: never() }),
    );
    expect(own).toMatchObject({ code: 'EGRESS_TIMEOUT', details: { timeout_seconds: 0.2 } });
    // Longer than the task's: the task's holds.
    const capped = await rejection(
      localEgress().fetch(
        { ...get(silent.url()), timeoutSeconds: 60 },
        access([`127.0.0.1:${silent.port}`], { timeoutSeconds: 0.2 }),
        { signal: never() },
      ),
    );
    expect(capped).toMatchObject({ code: 'EGRESS_TIMEOUT', details: { timeout_seconds: 0.2 } });
    for (const bad of [0, -1, Number.NaN]) {
      const refused = await rejection(
        localEgress().fetch({ ...get(silent.url()), timeoutSeconds: bad }, to, { signal: never() }),
      );
      expect(refused).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'timeoutSeconds' } });
    }
  });

  it("ends the request at once when the signal aborts, with the signal's reason", async () => {
    const slow = await startServer((_req, res) => {
      res.writeHead(200);
      res.write('start');
    });
    const allow = access([`127.0.0.1:${slow.port}`]);
    const controller = new AbortController();
    const reason = new CodecallError('SHUTDOWN', 'the service is stopping');
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    const error = await rejection(localEgress().fetch(get(slow.url()), allow, { signal: controller.signal }));
    expect(error.error).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2000);

    const plain = new AbortController();
    setTimeout(() => plain.abort('no error'), 50);
    const wrapped = await rejection(localEgress().fetch(get(slow.url()), allow, { signal: plain.signal }));
    expect(wrapped.code).toBe('ABORTED');

    const before = await rejection(
      localEgress().fetch(get(slow.url()), allow, { signal: AbortSignal.abort(reason) }),
    );
    expect(before.error).toBe(reason);
    expect(slow.seen).toHaveLength(2);
  });

  it('answers an empty body for 204 and a body exactly at the limit', async () => {
    const server = await startServer((req, res) =>
      req.url === '/none' ? res.writeHead(204).end() : res.end('x'.repeat(10)),
    );
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`], { maxBytes: 10 });
    expect((await egress.fetch(get(server.url('/none')), allow, { signal: never() })).body).toBe('');
    expect(text((await egress.fetch(get(server.url('/ten')), allow, { signal: never() })).body)).toBe(
      'x'.repeat(10),
    );
  });
});
