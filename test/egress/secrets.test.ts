// Secrets bound to destinations: injected for a bound host only, never in what the program gets back.
import { describe, expect, it } from 'vitest';
import { createEgress } from '../../src/egress/index.ts';
import { access, get, localEgress, lookupOf, never, rejection, startServer } from './servers.ts';

const SECRET = 's3cr3t-value-42';

describe('egress secrets', () => {
  it('injects a bound secret (the server sees it) and keeps it out of the response', async () => {
    const server = await startServer((req, res) => {
      // A server echoing the credential in a header and in its final URL.
      if (req.url === '/start')
        res.writeHead(302, { location: `/landed?token=${req.headers['x-api-key'] as string}` }).end();
      else res.writeHead(200, { 'x-echo': `got ${req.headers['x-api-key'] as string}` }).end('fine');
    });
    const egress = localEgress({
      lookup: lookupOf({ 'api.test': '127.0.0.1' }),
      secrets: [{ name: 'API_KEY', value: SECRET, hosts: [`api.test:${server.port}`] }],
    });
    const response = await egress.fetch(
      get(`http://api.test:${server.port}/start`, {
        headers: [
          ['X-Api-Key', '{{secret:API_KEY}}'],
          ['Authorization', 'Bearer {{secret:API_KEY}}'],
        ],
      }),
      access([`api.test:${server.port}`]),
      { signal: never() },
    );
    expect(server.seen[0]?.headers['x-api-key']).toBe(SECRET);
    expect(server.seen[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(server.seen[1]?.headers['x-api-key']).toBe(SECRET);
    expect(JSON.stringify(response)).not.toContain(SECRET);
    expect(response.headers).toContainEqual(['x-echo', 'got {{secret:API_KEY}}']);
    expect(response.url).toBe(`http://api.test:${server.port}/landed?token={{secret:API_KEY}}`);
  });

  it('refuses a secret not bound to the host, or one that does not exist, naming it and never its value', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const egress = localEgress({
      lookup: lookupOf({ 'api.test': '127.0.0.1', 'other.test': '127.0.0.1' }),
      secrets: [{ name: 'API_KEY', value: SECRET, hosts: [`api.test:${server.port}`] }],
    });
    const allow = access([`api.test:${server.port}`, `other.test:${server.port}`]);
    const unbound = await rejection(
      egress.fetch(
        get(`http://other.test:${server.port}/`, { headers: [['x-key', '{{secret:API_KEY}}']] }),
        allow,
        {
          signal: never(),
        },
      ),
    );
    expect(unbound).toMatchObject({
      code: 'EGRESS_REFUSED',
      details: { reason: 'secret', secret: 'API_KEY', host: 'other.test' },
    });
    expect(unbound.message).toContain('API_KEY');
    expect(JSON.stringify([unbound.message, unbound.details])).not.toContain(SECRET);
    // Another port of the same name is another destination.
    const otherPort = await startServer((_req, res) => res.end('should not be reached either'));
    const port = await rejection(
      egress.fetch(
        get(`http://api.test:${otherPort.port}/`, { headers: [['x-key', '{{secret:API_KEY}}']] }),
        access([`api.test:${otherPort.port}`]),
        { signal: never() },
      ),
    );
    expect(port).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'secret', secret: 'API_KEY' } });
    expect(otherPort.seen).toHaveLength(0);
    const unknown = await rejection(
      egress.fetch(
        get(`http://api.test:${server.port}/`, { headers: [['x-key', '{{secret:NOPE}}']] }),
        allow,
        {
          signal: never(),
        },
      ),
    );
    expect(unknown).toMatchObject({ code: 'EGRESS_REFUSED', details: { reason: 'secret', secret: 'NOPE' } });
    expect(server.seen).toHaveLength(0);
  });

  it('checks the bindings when the egress is made', () => {
    const bad = [
      [{ name: 'bad name', value: 'v', hosts: ['a.test'] }],
      [{ name: 'K', value: '', hosts: ['a.test'] }],
      [{ name: 'K', value: 'line\r\nbreak', hosts: ['a.test'] }],
      [{ name: 'K', value: 'v', hosts: [] }],
      [{ name: 'K', value: 'v', hosts: ['https://a.test'] }],
      [
        { name: 'K', value: 'v', hosts: ['a.test'] },
        { name: 'K', value: 'w', hosts: ['b.test'] },
      ],
    ];
    for (const secrets of bad) {
      let thrown: unknown;
      try {
        createEgress({ secrets });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(secrets)).toMatchObject({ code: 'INVALID_CONFIG' });
      expect(String((thrown as Error).message)).not.toContain('line');
    }
  });
});
