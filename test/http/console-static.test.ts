import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer, CONSOLE_NOT_BUILT } from '../../src/http/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { keyAuthenticator } from '../../src/service/index.ts';
import { SqliteTaskStore } from '../../src/store/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// The console's static files from buildServer's `console` option: public, with strict security headers, beside
// an API that still wants its key; and without a build, `/` says how to make one.

describe('web console files', () => {
  const fx = useDurableFixture('http-console-static');
  let runtime: Runtime;
  let dir = '';
  const apps: ReturnType<typeof buildServer>[] = [];
  beforeAll(async () => {
    runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([]) });
    dir = await mkdtemp(join(tmpdir(), 'codecall-console-files-'));
    await mkdir(join(dir, 'built', 'assets'), { recursive: true });
    await writeFile(join(dir, 'built', 'index.html'), '<!doctype html><title>codecall</title>');
    await writeFile(join(dir, 'built', 'assets', 'index-abc123.js'), 'console.log(1);');
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  });
  const serve = async (root: string) => {
    if (!(fx.store instanceof SqliteTaskStore)) throw new Error('the fixture store is not SQLite');
    const app = buildServer({
      runtime,
      store: fx.store,
      authenticate: keyAuthenticator(fx.store),
      console: { root },
    });
    apps.push(app);
    await app.ready();
    return app;
  };

  it('serves index.html at / and the assets without a key, with security headers', async () => {
    const app = await serve(join(dir, 'built'));
    const page = await app.inject({ url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('<title>codecall</title>');
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const asset = await app.inject({ url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toContain('javascript');
    expect(asset.headers['cache-control']).toContain('immutable');
    expect(asset.headers['x-content-type-options']).toBe('nosniff');

    // The API still wants a key, an unknown path is the API's 404, and no file outside the root is served.
    const api = await app.inject({ url: '/api/v1/tasks' });
    expect(api.statusCode).toBe(401);
    expect(api.json<{ error: { code: string } }>().error.code).toBe('UNAUTHORIZED');
    for (const url of ['/nope.js', '/assets/../../package.json', '/%2e%2e/package.json']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('NOT_FOUND');
    }
  });

  it('answers / with how to build the console when it is not built', async () => {
    const app = await serve(join(dir, 'missing'));
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain(CONSOLE_NOT_BUILT);
    expect(res.body).toContain('npm run build');
  });
});
