import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/auth/api-keys.ts';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';

// `codecall keys create --role approver`: the role is stored (migration 8 allows it); a wrong role is refused.

describe('codecall keys create --role', () => {
  let dir: string;
  let db: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-keys-role');
    db = join(dir, 'service.db');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('creates an approver key and stores its role', async () => {
    const r = await codecall(
      {},
      'keys',
      'create',
      '--tenant',
      'acme',
      '--role',
      'approver',
      '--db',
      db,
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({ tenant: 'acme', role: 'approver' });
    const store = await createSqliteTaskStore({ path: db });
    try {
      expect(await store.findApiKey(hashApiKey(String(out.key)))).toMatchObject({ role: 'approver' });
    } finally {
      await store.close();
    }
  });

  it('refuses an unknown role, and --admin with another role', async () => {
    for (const args of [
      ['--role', 'owner'],
      ['--role', 'member', '--admin'],
    ]) {
      const r = await codecall({}, 'keys', 'create', '--tenant', 'acme', ...args, '--db', db);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/--role must be one of admin, member, approver/);
    }
  });
});
