// GET /metrics counts every tenant (ADR 0032): with auth on it takes the metrics token or an admin key; a member
// key is 403, no or an unknown credential 401; without a token, admin keys only; in no-auth mode it is open.
// Real servers (startService on loopback, SQLite files), and one real `codecall serve --metrics-token-file`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRole } from '../../src/index.ts';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';
import { loadConfig, newApiKey } from '../../src/service/index.ts';
import { cliTestDir, startCodecall, until } from '../cli-fixture.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

async function start(dir: string, name: string, flags: Record<string, string | boolean>): Promise<Service> {
  const config = loadConfig({
    env: {},
    flags: { port: '0', db: join(dir, `${name}.db`), python: false, ...flags },
  });
  return startService(config, { log: () => undefined, model: null });
}

async function keyOf(service: Service, role: KeyRole): Promise<string> {
  const key = newApiKey();
  await service.store.createApiKey({ id: key.id, keyHash: key.keyHash, tenant: `tenant-${role}`, role });
  return key.key;
}

async function scrape(
  base: string,
  authorization?: string,
): Promise<{ status: number; code?: string; text: string }> {
  const res = await fetch(
    `${base}/metrics`,
    authorization === undefined ? {} : { headers: { authorization } },
  );
  const text = await res.text();
  if (res.status < 400) return { status: res.status, text };
  return { status: res.status, code: (JSON.parse(text) as { error: { code: string } }).error.code, text };
}

describe('GET /metrics access', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-metrics-auth-'));
  });
  afterAll(async () => {
    for (const s of services) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('auth on, a metrics token configured', () => {
    let service: Service;
    beforeAll(async () => {
      service = await start(dir, 'token', { metricsToken: TOKEN });
      services.push(service);
    });

    it('the token and an admin key read the metrics', async () => {
      const byToken = await scrape(service.address, `Bearer ${TOKEN}`);
      expect(byToken.status).toBe(200);
      expect(byToken.text).toContain('codecall_');
      expect((await scrape(service.address, `Bearer ${await keyOf(service, 'admin')}`)).status).toBe(200);
    });

    it.each<KeyRole>(['member', 'approver'])('a %s key is 403 FORBIDDEN', async (role) => {
      const res = await scrape(service.address, `Bearer ${await keyOf(service, role)}`);
      expect(res).toMatchObject({ status: 403, code: 'FORBIDDEN' });
      expect(res.text).not.toContain('codecall_');
    });

    it.each([
      ['no credentials', undefined],
      ['a wrong token', `Bearer ${TOKEN}x`],
      ['the token without Bearer', TOKEN],
    ])('%s is 401 UNAUTHORIZED', async (_name, authorization) => {
      const res = await scrape(service.address, authorization);
      expect(res).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(res.text).not.toContain('codecall_');
    });

    it('the token is no API key: it reads nothing under /api/v1', async () => {
      const res = await fetch(`${service.address}/api/v1/tasks`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(401);
    });
  });

  describe('auth on, no metrics token', () => {
    let service: Service;
    beforeAll(async () => {
      service = await start(dir, 'admin-only', {});
      services.push(service);
    });

    it('only an admin key reads the metrics', async () => {
      expect((await scrape(service.address, `Bearer ${await keyOf(service, 'admin')}`)).status).toBe(200);
      expect(await scrape(service.address, `Bearer ${await keyOf(service, 'member')}`)).toMatchObject({
        status: 403,
        code: 'FORBIDDEN',
      });
      expect(await scrape(service.address)).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(await scrape(service.address, `Bearer ${TOKEN}`)).toMatchObject({
        status: 401,
        code: 'UNAUTHORIZED',
      });
    });
  });

  describe('--insecure-no-auth', () => {
    it('the metrics are open (the server binds loopback)', async () => {
      const service = await start(dir, 'open', { insecureNoAuth: true });
      services.push(service);
      const res = await scrape(service.address);
      expect(res.status).toBe(200);
      expect(res.text).toContain('codecall_');
    });
  });

  it('refuses a token shorter than 16 characters (INVALID_CONFIG naming the key)', () => {
    expect(() => loadConfig({ env: { CODECALL_METRICS_TOKEN: 'short' }, flags: {} })).toThrow(
      /metricsToken \(from CODECALL_METRICS_TOKEN\)/,
    );
  });
});

describe('codecall serve --metrics-token-file', () => {
  let dir: string;
  let server: ReturnType<typeof startCodecall> | undefined;
  beforeAll(async () => {
    dir = await cliTestDir('metrics-token');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null)
      server.child.kill('SIGKILL');
    await server?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the token from the file (trailing newline dropped), not from the command line', async () => {
    const file = join(dir, 'metrics-token');
    await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
    server = startCodecall(
      { CODECALL_PYTHON: 'false' },
      'serve',
      '--port',
      '0',
      '--db',
      join(dir, 'tasks.db'),
      '--metrics-token-file',
      file,
    );
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(server?.stderr() ?? '')?.[1] ?? '';
      return base !== '' || server?.child.exitCode !== null;
    }, 60_000);
    expect(base, server.stderr()).not.toBe('');
    expect(server.child.spawnargs.join(' ')).not.toContain(TOKEN);
    expect((await scrape(base, `Bearer ${TOKEN}`)).status).toBe(200);
    expect(await scrape(base)).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  }, 90_000);
});
