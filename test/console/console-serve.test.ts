import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_NOT_BUILT, startService } from '../../src/http/index.ts';
import { loadConfig } from '../../src/service/index.ts';
import { buildConsole } from './console-fixture.ts';

// The service with the console (no browser): the built page at /, and a console that was never built makes the
// start-up log and / say how to build it.

describe('the service serves the web console', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-console-serve-'));
    await buildConsole(join(dir, 'built'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const start = async (root: string, log: string[]) =>
    startService(
      loadConfig({
        env: {},
        flags: { port: '0', db: join(dir, `${log.length}-${Date.now()}.db`), python: false },
      }),
      {
        log: (line) => log.push(line),
        console: { root },
      },
    );

  it('serves the built page, which loads only its own hashed assets', async () => {
    const log: string[] = [];
    const service = await start(join(dir, 'built'), log);
    try {
      expect(log).toContain(`web console at ${service.address}/`);
      const page = await fetch(`${service.address}/`);
      expect(page.status).toBe(200);
      const html = await page.text();
      // No inline script: every script and stylesheet is a file of the build, on this origin.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const a of assets) expect((await fetch(`${service.address}${a}`)).status, a).toBe(200);
    } finally {
      await service.close();
    }
  });

  it('says how to build the console when it is not built, in the log and at /', async () => {
    const log: string[] = [];
    const service = await start(join(dir, 'missing'), log);
    try {
      expect(log).toContain(`WARNING: ${CONSOLE_NOT_BUILT}`);
      const res = await fetch(`${service.address}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build');
      // The API is there all the same.
      expect((await fetch(`${service.address}/healthz`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });
});
