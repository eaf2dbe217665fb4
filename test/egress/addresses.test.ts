// Without the operator's allowPrivate, nothing but public unicast addresses is reached, whatever the task allows.
import { describe, expect, it } from 'vitest';
import { createEgress } from '../../src/egress/index.ts';
import { access, get, lookupOf, never, rejection, startServer } from './servers.ts';

describe('egress destinations', () => {
  it.each([
    ['http://10.0.0.1/', '10.0.0.1', 'private'],
    ['http://[::1]/', '[::1]', 'loopback'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254', 'link-local'],
    ['http://127.0.0.1:8080/', '127.0.0.1:8080', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]', 'loopback'],
    ['http://2130706433/', '127.0.0.1', 'loopback'],
    ['http://0.0.0.0/', '0.0.0.0', 'unspecified'],
  ])('refuses the literal %s even when the task allows it', async (url, entry, kind) => {
    const calls: string[] = [];
    const error = await rejection(
      createEgress({ lookup: lookupOf({}, calls) }).fetch(get(url), access([entry]), { signal: never() }),
    );
    expect(error).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'address' } });
    expect(error.message).toContain(kind);
    expect(calls).toEqual([]);
  });

  it.each(['localhost', 'api.localhost', 'LOCALHOST.'])(
    'refuses the name %s before resolving it',
    async (host) => {
      const calls: string[] = [];
      const error = await rejection(
        createEgress({ lookup: lookupOf({}, calls) }).fetch(
          get(`http://${host}/`),
          access([host.toLowerCase().replace(/\.$/, '')]),
          { signal: never() },
        ),
      );
      expect(error).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'address' } });
      expect(calls).toEqual([]);
    },
  );

  it('refuses a name resolving to loopback, and a public-looking one when any of its addresses is private', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const loop = await rejection(
      createEgress({ lookup: lookupOf({ 'api.test': '127.0.0.1' }) }).fetch(
        get(`http://api.test:${server.port}/`),
        access([`api.test:${server.port}`]),
        { signal: never() },
      ),
    );
    expect(loop).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'address', host: 'api.test', address: '127.0.0.1' },
    });
    expect(loop.message).toMatch(/api\.test resolves to 127\.0\.0\.1, a loopback address/);

    const mixed = createEgress({
      lookup: () =>
        Promise.resolve([
          { address: '93.184.216.34', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ]),
    });
    const error = await rejection(
      mixed.fetch(get('https://www.example.com/'), access(['www.example.com']), { signal: never() }),
    );
    expect(error).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'address', address: '169.254.169.254' },
    });
    expect(server.seen).toHaveLength(0);
  });

  it('reaches the same loopback server when the operator allows private destinations', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const response = await createEgress({
      allowPrivate: true,
      lookup: lookupOf({ 'api.test': '127.0.0.1' }),
    }).fetch(get(`http://api.test:${server.port}/`), access([`api.test:${server.port}`]), {
      signal: never(),
    });
    expect(response.status).toBe(200);
  });
});
