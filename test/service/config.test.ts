import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CodecallError } from '../../src/errors/index.ts';
import { PROVIDER_PRESETS } from '../../src/model/index.ts';
import { DEFAULT_PORT, envName, loadConfig } from '../../src/service/index.ts';

describe('service config', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-config-'));
    file = join(dir, 'codecall.json');
    await writeFile(file, JSON.stringify({ port: 9000, host: '0.0.0.0', concurrency: 8, db: 'file.db' }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('has embedded defaults', () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      port: 8484,
      host: '127.0.0.1',
      db: 'data/codecall.db',
      tools: null,
      concurrency: 4,
      tenantConcurrency: null,
      webhookSecret: null,
      allowPrivateWebhooks: false,
      insecureNoAuth: false,
    });
  });

  it("listens by default on a port no local model server takes by default (llama-server's is 8080)", () => {
    expect(loadConfig({ env: {} }).port).toBe(DEFAULT_PORT);
    // The llamacpp preset is where llama-server listens unless told otherwise.
    expect(PROVIDER_PRESETS.llamacpp.defaultBaseUrl).toBe('http://127.0.0.1:8080/v1');
    const localPorts = Object.values(PROVIDER_PRESETS)
      .map((p) => new URL(p.defaultBaseUrl))
      .filter((url) => url.hostname === '127.0.0.1' || url.hostname === 'localhost')
      .map((url) => Number(url.port));
    expect(localPorts).toEqual([8000, 11434, 8080]);
    expect(localPorts).not.toContain(DEFAULT_PORT);
  });

  it('bounds a task journal by default, from the environment or a flag', () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      maxJournalBytes: 64 * 1024 * 1024,
      maxJournalEntries: 100_000,
    });
    const config = loadConfig({
      env: { CODECALL_MAX_JOURNAL_BYTES: '1048576' },
      flags: { maxJournalEntries: '500' },
    });
    expect(config).toMatchObject({ maxJournalBytes: 1048576, maxJournalEntries: 500 });
    expect(() => loadConfig({ env: { CODECALL_MAX_JOURNAL_BYTES: '10' } })).toThrow(/maxJournalBytes/);
  });

  it('takes a postgres:// URL as db, with pool size, statement timeout and schema from the environment or flags', () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      postgresPoolSize: 10,
      postgresStatementTimeoutMs: 30_000,
      postgresSchema: 'codecall',
    });
    const config = loadConfig({
      env: {
        CODECALL_DB: 'postgres://codecall@db.internal:5432/codecall',
        CODECALL_POSTGRES_POOL_SIZE: '20',
        CODECALL_POSTGRES_SCHEMA: 'tenant_a',
      },
      flags: { postgresStatementTimeoutMs: '0' },
    });
    expect(config).toMatchObject({
      db: 'postgres://codecall@db.internal:5432/codecall',
      postgresPoolSize: 20,
      postgresStatementTimeoutMs: 0,
      postgresSchema: 'tenant_a',
    });
    expect(() => loadConfig({ env: { CODECALL_POSTGRES_SCHEMA: 'Robert"; DROP' } })).toThrow(
      /postgresSchema \(from CODECALL_POSTGRES_SCHEMA\): must be a plain SQL name/,
    );
    expect(() => loadConfig({ env: { CODECALL_POSTGRES_POOL_SIZE: '0' } })).toThrow(/postgresPoolSize/);
  });

  it('merges file < environment < flags, and freezes the result', () => {
    const config = loadConfig({
      file,
      env: { CODECALL_PORT: '9100', CODECALL_CONCURRENCY: '16', CODECALL_ALLOW_PRIVATE_WEBHOOKS: 'true' },
      flags: { port: '9200', insecureNoAuth: true },
    });
    expect(config).toMatchObject({
      port: 9200,
      host: '0.0.0.0',
      concurrency: 16,
      db: 'file.db',
      allowPrivateWebhooks: true,
      insecureNoAuth: true,
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    // The file may also come from the environment.
    expect(loadConfig({ env: { CODECALL_CONFIG: file } }).port).toBe(9000);
    expect(envName('tenantConcurrency')).toBe('CODECALL_TENANT_CONCURRENCY');
  });

  it('names the key and the source of a bad value', () => {
    const fail = (options: Parameters<typeof loadConfig>[0]): CodecallError => {
      try {
        loadConfig(options);
      } catch (e) {
        return e as CodecallError;
      }
      throw new Error('loadConfig accepted a bad config');
    };
    const fromEnv = fail({ env: { CODECALL_PORT: 'eighty' } });
    expect(fromEnv.code).toBe('INVALID_CONFIG');
    expect(fromEnv.message).toContain('port (from CODECALL_PORT)');
    expect(fromEnv.details).toEqual({ field: 'port', source: 'CODECALL_PORT' });
    expect(fail({ env: {}, flags: { concurrency: '0' } }).message).toContain(
      'concurrency (from --concurrency)',
    );
    expect(fail({ env: { CODECALL_INSECURE_NO_AUTH: 'maybe' } }).details).toMatchObject({
      field: 'insecureNoAuth',
    });
    expect(fail({ env: {}, flags: { port: '70000' } }).details).toMatchObject({ field: 'port' });
  });

  it('reads the approval keys from flags and the environment, never expiring by default', () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      approverRoles: null,
      approvalSeparation: false,
      approvalTtlSeconds: null,
    });
    expect(
      loadConfig({
        env: { CODECALL_APPROVAL_TTL_SECONDS: '600' },
        flags: { approverRoles: 'approver,admin', approvalSeparation: true },
      }),
    ).toMatchObject({
      approverRoles: ['approver', 'admin'],
      approvalSeparation: true,
      approvalTtlSeconds: 600,
    });
    expect(loadConfig({ env: {}, flags: { approvalTtlSeconds: '30' } }).approvalTtlSeconds).toBe(30);
    for (const bad of ['0', '1.5', '40000000']) {
      expect(() => loadConfig({ env: {}, flags: { approvalTtlSeconds: bad } })).toThrow(
        /approvalTtlSeconds \(from --approval-ttl-seconds\)/,
      );
    }
  });

  it('refuses a missing, unparsable or unknown-keyed config file', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ "port": ');
    const unknown = join(dir, 'unknown.json');
    await writeFile(unknown, JSON.stringify({ prot: 8080 }));
    const list = join(dir, 'list.json');
    await writeFile(list, '[1]');
    expect(() => loadConfig({ env: {}, file: join(dir, 'none.json') })).toThrow(/cannot read config file/);
    expect(() => loadConfig({ env: {}, file: bad })).toThrow(/is not JSON/);
    expect(() => loadConfig({ env: {}, file: list })).toThrow(/must hold a JSON object/);
    expect(() => loadConfig({ env: {}, file: unknown })).toThrow(/unknown config key prot/);
  });
});
