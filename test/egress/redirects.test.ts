// Redirects followed by hand: each hop checked again (scheme, allow list, addresses), bounded, and credentials
// kept from other origins.
import { describe, expect, it } from 'vitest';
import { egressFromSettings } from '../../src/egress/create-egress.ts';
import { egressSettings } from '../../src/egress/egress-settings.ts';
import { refusedAddressReason } from '../../src/egress/index.ts';
import { access, get, localEgress, lookupOf, never, rejection, startServer, text } from './servers.ts';

const names = lookupOf({ 'a.test': '127.0.0.1', 'b.test': '127.0.0.1', 'meta.test': '169.254.169.254' });

describe('egress redirects', () => {
  it('follows one to another allowed host, reports the last URL and the entry that allowed it', async () => {
    const target = await startServer((_req, res) => res.end('arrived'));
    const start = await startServer((_req, res) =>
      res.writeHead(302, { location: `http://b.test:${target.port}/end?x=1` }).end('moved'),
    );
    const response = await localEgress({ lookup: names }).fetch(
      get(`http://a.test:${start.port}/go`),
      access([`a.test:${start.port}`, `*.test:${target.port}`]),
      { signal: never() },
    );
    expect(response).toMatchObject({
      status: 200,
      url: `http://b.test:${target.port}/end?x=1`,
      redirected: true,
      allowedBy: `*.test:${target.port}`,
    });
    expect(text(response.body)).toBe('arrived');
  });

  it('refuses a redirect to a host the task does not allow, or to http when it allows only https', async () => {
    const target = await startServer((_req, res) => res.end('should not be reached'));
    const start = await startServer((req, res) =>
      res
        .writeHead(302, {
          location: req.url === '/ftp' ? 'ftp://a.test/' : `http://b.test:${target.port}/`,
        })
        .end(),
    );
    const egress = localEgress({ lookup: names });
    const refused = await rejection(
      egress.fetch(get(`http://a.test:${start.port}/`), access([`a.test:${start.port}`]), {
        signal: never(),
      }),
    );
    expect(refused).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'not_allowed', host: 'b.test' },
    });
    const scheme = await rejection(
      egress.fetch(get(`http://a.test:${start.port}/ftp`), access([`a.test:${start.port}`]), {
        signal: never(),
      }),
    );
    expect(scheme.details.reason).toBe('scheme');
    expect(target.seen).toHaveLength(0);
  });

  it('refuses a redirect to a private address, by literal or by what the name resolves to', async () => {
    const start = await startServer((req, res) =>
      res
        .writeHead(307, {
          location: req.url === '/literal' ? 'http://169.254.169.254/latest/meta-data' : 'http://meta.test/',
        })
        .end(),
    );
    // A network where the test server's address counts as public: every other private address is refused.
    const settings = egressSettings({ lookup: names });
    const egress = egressFromSettings({
      ...settings,
      refusedAddress: (address) => (address === '127.0.0.1' ? null : refusedAddressReason(address)),
    });
    const allow = access([`a.test:${start.port}`, '169.254.169.254', 'meta.test']);
    const literal = await rejection(
      egress.fetch(get(`http://a.test:${start.port}/literal`), allow, { signal: never() }),
    );
    expect(literal).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'address', address: '169.254.169.254' },
    });
    const named = await rejection(
      egress.fetch(get(`http://a.test:${start.port}/name`), allow, { signal: never() }),
    );
    expect(named).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'address', host: 'meta.test', address: '169.254.169.254' },
    });
    expect(named.message).toMatch(/link-local/);
    expect(start.seen).toHaveLength(2);
  });

  it('stops a loop after the operator allows (maxRedirects)', async () => {
    const loop = await startServer((_req, res) => res.writeHead(301, { location: '/again' }).end());
    const error = await rejection(
      localEgress({ limits: { maxRedirects: 3 } }).fetch(
        get(loop.url()),
        access([`127.0.0.1:${loop.port}`]),
        {
          signal: never(),
        },
      ),
    );
    expect(error).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'redirect', max_redirects: 3 },
    });
    expect(loop.seen).toHaveLength(4);
  });

  it('turns a POST into a GET without its body on 303 (and 301, 302), keeps both on 307 and 308', async () => {
    const server = await startServer((req, res, seen) => {
      const status = /^\/(\d{3})$/.exec(req.url ?? '')?.[1];
      if (status !== undefined) res.writeHead(Number(status), { location: '/target' }).end();
      else res.end(`${seen.method} ${seen.body} ${seen.headers['content-type'] ?? '-'}`);
    });
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`]);
    const post = (status: number): Promise<string> =>
      egress
        .fetch(
          {
            url: server.url(`/${status}`),
            method: 'POST',
            headers: [['content-type', 'text/plain']],
            body: Buffer.from('data').toString('base64'),
          },
          allow,
          { signal: never() },
        )
        .then((r) => text(r.body));
    expect(await post(303)).toBe('GET  -');
    expect(await post(301)).toBe('GET  -');
    expect(await post(302)).toBe('GET  -');
    expect(await post(307)).toBe('POST data text/plain');
    expect(await post(308)).toBe('POST data text/plain');
    const put303 = await egress.fetch(
      { url: server.url('/303'), method: 'PUT', headers: [], body: Buffer.from('x').toString('base64') },
      allow,
      { signal: never() },
    );
    expect(text(put303.body)).toBe('GET  -');
  });

  it("returns the 3xx itself with redirect: 'manual', and refuses it with redirect: 'error'", async () => {
    const server = await startServer((req, res) =>
      req.url === '/moved'
        ? res.writeHead(302, 'Found', { location: '/there' }).end('see /there')
        : res.end('there'),
    );
    const egress = localEgress();
    const allow = access([`127.0.0.1:${server.port}`]);
    const manual = await egress.fetch(get(server.url('/moved'), { redirect: 'manual' }), allow, {
      signal: never(),
    });
    expect(manual).toMatchObject({
      status: 302,
      statusText: 'Found',
      redirected: false,
      url: server.url('/moved'),
    });
    expect(manual.headers).toContainEqual(['location', '/there']);
    expect(text(manual.body)).toBe('see /there');
    const error = await rejection(
      egress.fetch(get(server.url('/moved'), { redirect: 'error' }), allow, { signal: never() }),
    );
    expect(error).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'redirect', status: 302 } });
    expect(server.seen).toHaveLength(2);
  });

  it('drops Authorization, cookies and injected secrets when a redirect leaves the origin, keeps them within it', async () => {
    const other = await startServer((_req, res) => res.end('other'));
    const start = await startServer((req, res) => {
      if (req.url === '/same') res.writeHead(302, { location: '/landed' }).end();
      else if (req.url === '/cross')
        res.writeHead(302, { location: `http://b.test:${other.port}/landed` }).end();
      else res.end('landed');
    });
    const egress = localEgress({
      lookup: names,
      secrets: [
        { name: 'KEY', value: 'k-123', hosts: ['*.test:' + String(start.port), `b.test:${other.port}`] },
      ],
    });
    const allow = access([`a.test:${start.port}`, `b.test:${other.port}`]);
    const headers: [string, string][] = [
      ['Authorization', 'Bearer t0ken'],
      ['Cookie', 'session=1'],
      ['X-Key', '{{secret:KEY}}'],
      ['X-Plain', 'kept'],
    ];
    await egress.fetch(get(`http://a.test:${start.port}/same`, { headers }), allow, { signal: never() });
    const landed = start.seen[1]?.headers;
    expect(landed?.authorization).toBe('Bearer t0ken');
    expect(landed?.cookie).toBe('session=1');
    expect(landed?.['x-key']).toBe('k-123');

    await egress.fetch(get(`http://a.test:${start.port}/cross`, { headers }), allow, { signal: never() });
    const crossed = other.seen[0]?.headers;
    expect(crossed?.authorization).toBeUndefined();
    expect(crossed?.cookie).toBeUndefined();
    // Bound to b.test too, the secret still does not follow a redirect there: the program sent it to a.test.
    expect(crossed?.['x-key']).toBeUndefined();
    expect(crossed?.['x-plain']).toBe('kept');
  });
});
