import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';
import { loadConfig, newApiKey } from '../../src/service/index.ts';
import type { CodecallError } from '../../src/errors/index.ts';
import { assertBuilt, codecall, lastJson, startCodecall, until } from '../cli-fixture.ts';

// Issue 17 item 7: a server without API keys (--insecure-no-auth) listens on loopback only, answers only to its
// own Host names (DNS rebinding) and refuses browsers' requests from other origins; the CLI, curl and our client
// (no Origin, no Sec-Fetch-Site) keep working. A real `codecall serve` core on a loopback port, node:http as the
// client (it lets a test set Host, Origin and Sec-Fetch-Site as a browser or an attacker would).

interface Answer {
  readonly status: number;
  readonly body: { error?: { code: string; message: string } } & Record<string, unknown>;
}

function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Answer> {
  const url = new URL(path, base);
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: data === '' ? {} : (JSON.parse(data) as Answer['body']),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const TASK = { code: 'return 1 + 1' };

async function start(dir: string, flags: Record<string, string | boolean>): Promise<Service> {
  const config = loadConfig({
    env: {},
    flags: { port: '0', db: join(dir, `${Object.keys(flags).join('-')}.db`), python: false, ...flags },
  });
  return startService(config, { log: () => undefined, tools: [] });
}

describe('a no-auth server takes requests only from its own origin', () => {
  let dir: string;
  let service: Service;
  let base: string;
  let port: string;
  const tasks = () => service.store.countTasks();
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-origin-'));
    service = await start(dir, { insecureNoAuth: true });
    base = service.address;
    port = new URL(base).port;
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('creates tasks for a client that sends neither Origin nor Sec-Fetch-Site (CLI, curl)', async () => {
    const before = await tasks();
    const created = await send(base, 'POST', '/api/v1/tasks', {}, TASK);
    expect(created.status).toBe(201);
    expect(await tasks()).toBe(before + 1);
    expect((await send(base, 'GET', '/api/v1/tasks')).status).toBe(200);
  });

  it('answers 421 HOST_NOT_ALLOWED to a Host it does not answer to (DNS rebinding)', async () => {
    const before = await tasks();
    for (const host of [`evil.example:${port}`, 'evil.example', `localhost.evil.example:${port}`, 'a b']) {
      const refused = await send(base, 'POST', '/api/v1/tasks', { host }, TASK);
      expect(refused.status, host).toBe(421);
      expect(refused.body.error?.code).toBe('HOST_NOT_ALLOWED');
      expect(refused.body.error?.message).toContain('--allowed-host');
      const read = await send(base, 'GET', '/api/v1/tasks', { host });
      expect(read.status, host).toBe(421);
    }
    expect(await tasks()).toBe(before);
    // The loopback names and IP literals, on any port, are the server's own.
    for (const host of [`localhost:${port}`, 'localhost', `127.0.0.1:${port}`, `[::1]:${port}`, '10.1.2.3']) {
      expect((await send(base, 'GET', '/healthz', { host })).status, host).toBe(200);
    }
  });

  it('refuses 403 CROSS_ORIGIN_REFUSED a request whose Origin is another origin, and creates nothing', async () => {
    const before = await tasks();
    const others = [
      'http://evil.example',
      `http://evil.example:${port}`,
      'http://127.0.0.1:1',
      `https://localhost:${port}`.replace(port, String(Number(port) + 1)),
      'null',
      'not a url',
    ];
    for (const origin of others) {
      const refused = await send(base, 'POST', '/api/v1/tasks', { origin }, TASK);
      expect(refused.status, origin).toBe(403);
      expect(refused.body.error?.code).toBe('CROSS_ORIGIN_REFUSED');
    }
    // Reads of the API from another origin too (CORS would hide the answer, but nothing needs them).
    const read = await send(base, 'GET', '/api/v1/tasks', { origin: 'http://evil.example' });
    expect(read.status).toBe(403);
    expect(await tasks()).toBe(before);
  });

  it('takes a request from its own origin', async () => {
    const before = await tasks();
    const own = await send(
      base,
      'POST',
      '/api/v1/tasks',
      { origin: base, 'sec-fetch-site': 'same-origin' },
      TASK,
    );
    expect(own.status).toBe(201);
    // Under another of its names, the Origin matching that Host.
    const named = `http://localhost:${port}`;
    const byName = await send(
      base,
      'POST',
      '/api/v1/tasks',
      { host: `localhost:${port}`, origin: named },
      TASK,
    );
    expect(byName.status).toBe(201);
    expect(await tasks()).toBe(before + 2);
  });

  it('refuses a browser request marked Sec-Fetch-Site cross-site or same-site, passes same-origin and none', async () => {
    const before = await tasks();
    for (const site of ['cross-site', 'same-site', 'cross-site, same-origin']) {
      const refused = await send(base, 'POST', '/api/v1/tasks', { 'sec-fetch-site': site }, TASK);
      expect(refused.status, site).toBe(403);
      expect(refused.body.error?.code).toBe('CROSS_ORIGIN_REFUSED');
      expect((await send(base, 'GET', '/api/v1/tasks', { 'sec-fetch-site': site })).status).toBe(403);
    }
    expect(await tasks()).toBe(before);
    for (const site of ['same-origin', 'none']) {
      expect((await send(base, 'POST', '/api/v1/tasks', { 'sec-fetch-site': site }, TASK)).status).toBe(201);
    }
    // The route is what counts, not the spelling of the path.
    expect((await send(base, 'GET', '/%61pi/v1/tasks', { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // A link from another site to a page that is not the API (the console, the probes) still opens.
    expect((await send(base, 'GET', '/healthz', { 'sec-fetch-site': 'cross-site' })).status).toBe(200);
  });

  it('`codecall tasks submit --url` (our client, no Origin) still creates and follows a task', async () => {
    assertBuilt();
    const program = join(dir, 'six.js');
    await writeFile(program, 'return 6 * 7;\n');
    const run = await codecall({}, 'tasks', 'submit', program, '--url', base, '--wait', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({ status: 'succeeded', result: { output: 42 } });
  });

  it('refuses to start a no-auth server on a non-loopback address, naming the flag', async () => {
    for (const host of ['0.0.0.0', '::', 'example.com']) {
      const config = loadConfig({
        env: {},
        flags: { port: '0', db: join(dir, 'refused.db'), python: false, insecureNoAuth: true, host },
      });
      let error: CodecallError | undefined;
      await startService(config, { log: () => undefined, tools: [] }).catch((e: CodecallError) => {
        error = e;
      });
      expect(error?.code, host).toBe('INVALID_CONFIG');
      expect(error?.message).toContain('--allow-remote-no-auth');
    }
  });

  it('`codecall serve --insecure-no-auth --host 0.0.0.0` exits with the error, before it binds', async () => {
    assertBuilt();
    const db = join(dir, 'cli-refused.db');
    const run = await codecall(
      {},
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--insecure-no-auth',
      '--host',
      '0.0.0.0',
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--allow-remote-no-auth');
  });
});

describe('the Host check when the operator opens a no-auth server or sets allowedHosts', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-origin-open-'));
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.close()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('--allow-remote-no-auth listens on 0.0.0.0 and still refuses foreign Host names and origins', async () => {
    const service = await start(dir, { insecureNoAuth: true, allowRemoteNoAuth: true, host: '0.0.0.0' });
    services.push(service);
    const base = `http://127.0.0.1:${new URL(service.address).port}`;
    expect((await send(base, 'POST', '/api/v1/tasks', {}, TASK)).status).toBe(201);
    expect((await send(base, 'GET', '/healthz', { host: 'evil.example' })).status).toBe(421);
    expect((await send(base, 'POST', '/api/v1/tasks', { origin: 'http://evil.example' }, TASK)).status).toBe(
      403,
    );
  });

  it('an explicit allowedHosts list is checked with API keys too, and replaces the defaults', async () => {
    const service = await start(dir, { allowedHosts: 'codecall.internal, 127.0.0.1' });
    services.push(service);
    const key = newApiKey();
    await service.store.createApiKey({ ...key, tenant: 't', role: 'member', name: 'test' });
    const auth = { authorization: `Bearer ${key.key}` };
    const { address } = service;
    const port = new URL(address).port;
    expect((await send(address, 'GET', '/api/v1/tasks', auth)).status).toBe(200);
    expect(
      (await send(address, 'GET', '/api/v1/tasks', { ...auth, host: `codecall.internal:${port}` })).status,
    ).toBe(200);
    const refused = await send(address, 'GET', '/api/v1/tasks', { ...auth, host: `localhost:${port}` });
    expect(refused.status).toBe(421);
    expect(refused.body.error?.code).toBe('HOST_NOT_ALLOWED');
    // With keys, another origin is the key holder's business (CORS still hides answers): no Origin check.
    const fromPage = await send(
      address,
      'POST',
      '/api/v1/tasks',
      { ...auth, origin: 'http://evil.example' },
      TASK,
    );
    expect(fromPage.status).toBe(201);
  });

  it('with keys and no allowedHosts, any Host is answered (keys, not names, guard that server)', async () => {
    const service = await start(dir, {});
    services.push(service);
    expect((await send(service.address, 'GET', '/healthz', { host: 'anything.example' })).status).toBe(200);
  });

  it('`codecall serve --allowed-host` (repeatable) sets the list', async () => {
    assertBuilt();
    const db = join(dir, 'cli-hosts.db');
    const s = startCodecall(
      { CODECALL_PYTHON: 'false' },
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--insecure-no-auth',
      '--allowed-host',
      'a.example',
      '--allowed-host',
      '127.0.0.1',
    );
    try {
      let base = '';
      await until(() => {
        base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
        return base !== '';
      });
      const port = new URL(base).port;
      expect((await send(base, 'GET', '/healthz', { host: `a.example:${port}` })).status).toBe(200);
      expect((await send(base, 'GET', '/healthz', { host: `127.0.0.1:${port}` })).status).toBe(200);
      expect((await send(base, 'GET', '/healthz', { host: `localhost:${port}` })).status).toBe(421);
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  it('refuses a malformed allowedHosts entry at load', () => {
    expect(() => loadConfig({ env: { CODECALL_ALLOWED_HOSTS: 'ok.example,not a host' } })).toThrow(
      /allowedHosts \(from CODECALL_ALLOWED_HOSTS\)/,
    );
  });
});
