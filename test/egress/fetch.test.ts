// createEgress against real HTTP servers on loopback: what goes out, what comes back, what is refused.
import { describe, expect, it } from 'vitest';
import { createEgress } from '../../src/egress/index.ts';
import {
  access,
  closedPort,
  get,
  localEgress,
  lookupOf,
  never,
  rejection,
  startServer,
  text,
} from './servers.ts';

describe('egress fetch', () => {
  it('answers status, headers in order with lower-case names, the body in base64, the URL and the entry', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(201, 'Made', [
        ['X-First', 'a'],
        ['Set-Cookie', 'x=1'],
        ['Set-Cookie', 'y=2'],
        ['Content-Type', 'application/octet-stream'],
      ]);
      res.end(Buffer.from([0, 1, 254, 255]));
    });
    const response = await localEgress().fetch(
      get(server.url('/path?q=1#frag')),
      access([`127.0.0.1:${server.port}`]),
      { signal: never() },
    );
    expect(response).toMatchObject({
      status: 201,
      statusText: 'Made',
      url: `http://127.0.0.1:${server.port}/path?q=1`,
      redirected: false,
      body: Buffer.from([0, 1, 254, 255]).toString('base64'),
      allowedBy: `127.0.0.1:${server.port}`,
    });
    expect(response.headers.slice(0, 4)).toEqual([
      ['x-first', 'a'],
      ['set-cookie', 'x=1'],
      ['set-cookie', 'y=2'],
      ['content-type', 'application/octet-stream'],
    ]);
    expect(server.seen[0]?.url).toBe('/path?q=1');
  });

  it('sends the method, the headers in order and the body; asks for identity encoding unless told otherwise', async () => {
    const server = await startServer((_req, res, seen) => {
      res.setHeader('content-encoding', 'gzip');
      res.end(`${seen.method}:${seen.body}`);
    });
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`]);
    const response = await egress.fetch(
      {
        url: server.url('/post'),
        method: 'POST',
        headers: [
          ['X-B', '2'],
          ['x-a', '1'],
          ['Content-Type', 'text/plain'],
        ],
        body: Buffer.from('hello').toString('base64'),
      },
      allow,
      { signal: never() },
    );
    expect(text(response.body)).toBe('POST:hello');
    // Returned as received: the body is not decoded whatever the server says.
    expect(response.headers).toContainEqual(['content-encoding', 'gzip']);
    const seen = server.seen[0];
    expect(seen?.headers['content-length']).toBe('5');
    expect(seen?.headers['accept-encoding']).toBe('identity');
    expect(seen?.headers['user-agent']).toBe('codecall-egress/1');
    expect(seen?.headers.host).toBe(`127.0.0.1:${server.port}`);
    const raw = seen?.rawHeaders ?? [];
    expect(raw.indexOf('X-B')).toBeLessThan(raw.indexOf('x-a'));

    await egress.fetch(
      get(server.url(), {
        headers: [
          ['Accept-Encoding', 'gzip'],
          ['User-Agent', 'me'],
        ],
      }),
      allow,
      {
        signal: never(),
      },
    );
    expect(server.seen[1]?.headers['accept-encoding']).toBe('gzip');
    expect(server.seen[1]?.headers['user-agent']).toBe('me');
  });

  it('refuses a method the task does not allow, and CONNECT and TRACE always', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const egress = localEgress();
    const onlyGet = access([`127.0.0.1:${server.port}`], { methods: ['GET'] });
    const post = await rejection(
      egress.fetch({ ...get(server.url()), method: 'POST' }, onlyGet, { signal: never() }),
    );
    expect(post).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'method', method: 'POST' } });
    const trace = await rejection(
      egress.fetch({ ...get(server.url()), method: 'TRACE' }, access([`127.0.0.1:${server.port}`]), {
        signal: never(),
      }),
    );
    expect(trace.details.reason).toBe('method');
    expect(server.seen).toHaveLength(0);
    const ok = await egress.fetch(
      { ...get(server.url()), method: 'delete' },
      access([`127.0.0.1:${server.port}`]),
      {
        signal: never(),
      },
    );
    expect(ok.status).toBe(200);
    expect(server.seen[0]?.method).toBe('DELETE');
  });

  it('refuses http unless the task allows it, and any other scheme', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const egress = localEgress();
    const entry = `127.0.0.1:${server.port}`;
    const http = await rejection(egress.fetch(get(server.url()), { allow: [entry] }, { signal: never() }));
    expect(http).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'scheme' } });
    expect(http.message).toMatch(/allow_http/);
    for (const url of [`ftp://127.0.0.1:${server.port}/`, 'file:///etc/passwd', 'data:text/plain,hi']) {
      const other = await rejection(egress.fetch(get(url), access([entry]), { signal: never() }));
      expect(other.details.reason, url).toBe('scheme');
    }
    expect(server.seen).toHaveLength(0);
    expect((await egress.fetch(get(server.url()), access([entry]), { signal: never() })).status).toBe(200);
  });

  it('refuses a host or port in no allow entry, and credentials in the URL', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const egress = localEgress({ lookup: lookupOf({ 'api.test': '127.0.0.1' }) });
    const port = await rejection(
      egress.fetch(get(server.url()), access([`127.0.0.1:${server.port + 1}`, '127.0.0.1']), {
        signal: never(),
      }),
    );
    expect(port).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'not_allowed', port: server.port },
    });
    const wildcard = await rejection(
      egress.fetch(get(`http://api.test:${server.port}/`), access([`*.api.test:${server.port}`]), {
        signal: never(),
      }),
    );
    expect(wildcard.details.reason).toBe('not_allowed');
    const credentials = await rejection(
      egress.fetch(get(`http://u:p@127.0.0.1:${server.port}/`), access([`127.0.0.1:${server.port}`]), {
        signal: never(),
      }),
    );
    expect(credentials.details.reason).toBe('credentials');
    expect(server.seen).toHaveLength(0);
    const byName = await egress.fetch(
      get(`http://API.test:${server.port}/`),
      access([`api.test:${server.port}`]),
      {
        signal: never(),
      },
    );
    expect(byName.allowedBy).toBe(`api.test:${server.port}`);
  });

  it('refuses headers the host writes itself, and malformed parts as invalid arguments', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`]);
    for (const name of ['Host', 'content-length', 'Transfer-Encoding', 'connection']) {
      const refused = await rejection(
        egress.fetch(get(server.url(), { headers: [[name, 'x']] }), allow, { signal: never() }),
      );
      expect(refused, name).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'header' } });
    }
    const bad = [
      get('not a url'),
      get(server.url(), { method: 'GE T' }),
      get(server.url(), { headers: [['x', 'a\r\nInjected: 1']] }),
      get(server.url(), { headers: [['bad name', 'a']] }),
      get(server.url(), { method: 'POST', body: 'not base64!' }),
      get(server.url(), { redirect: 'sometimes' as 'follow' }),
    ];
    for (const request of bad) {
      const error = await rejection(egress.fetch(request, allow, { signal: never() }));
      expect(error.code, JSON.stringify(request)).toBe('INVALID_ARGUMENT');
    }
    expect(server.seen).toHaveLength(0);
  });

  it('fails with EGRESS_FAILED naming the host when the connection is refused or reset, or DNS has no answer', async () => {
    const port = await closedPort();
    const egress = localEgress({ lookup: lookupOf({ 'api.test': '127.0.0.1' }) });
    const refused = await rejection(
      egress.fetch(get(`http://api.test:${port}/`), access([`api.test:${port}`]), { signal: never() }),
    );
    expect(refused).toMatchObject({
      code: 'EGRESS_FAILED',
      details: { cause: 'connection_refused', host: 'api.test' },
    });
    expect(refused.message).toMatch(/api\.test/);

    const nxdomain = await rejection(
      egress.fetch(get('http://nowhere.test/'), access(['nowhere.test:80']), { signal: never() }),
    );
    expect(nxdomain).toMatchObject({
      code: 'EGRESS_FAILED',
      details: { cause: 'dns', host: 'nowhere.test' },
    });
    expect(nxdomain.message).toMatch(/nowhere\.test/);

    const reset = await startServer((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const cut = await rejection(
      egress.fetch(get(reset.url()), access([`127.0.0.1:${reset.port}`]), { signal: never() }),
    );
    expect(cut).toMatchObject({ code: 'EGRESS_FAILED', details: { cause: 'connection_reset' } });
  });

  it('connects to the address its lookup vetted, once per request, and never asks the system resolver', async () => {
    const server = await startServer((_req, res) => res.end('pinned'));
    const calls: string[] = [];
    const egress = localEgress({ lookup: lookupOf({ 'pinned.test': '127.0.0.1' }, calls) });
    const response = await egress.fetch(
      get(`http://pinned.test:${server.port}/`),
      access([`pinned.test:${server.port}`]),
      { signal: never() },
    );
    expect(text(response.body)).toBe('pinned');
    expect(calls).toEqual(['pinned.test']);
    expect(server.seen[0]?.headers.host).toBe(`pinned.test:${server.port}`);
  });

  it('checks its options', () => {
    expect(() => createEgress({ limits: { maxBytes: 0 } })).toThrow(/maxBytes/);
    expect(() => createEgress({ limits: { timeoutSeconds: -1 } })).toThrow(/timeoutSeconds/);
    expect(() => createEgress({ limits: { maxRedirects: 1.5 } })).toThrow(/maxRedirects/);
    expect(() => createEgress({ limits: { maxBytes: undefined } })).not.toThrow();
  });
});
