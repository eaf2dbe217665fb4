import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/auth/api-keys.ts';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';

// `codecall keys`: a key is printed once and only its hash is stored; list never shows a hash; revoke is final.

describe('codecall keys create|list|revoke', () => {
  let dir: string;
  let db: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-keys');
    // A directory that does not exist yet: the first key is the service's first setup.
    db = join(dir, 'fresh', 'nested', 'service.db');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('creates the database for the first key, prints the key once and stores only its hash', async () => {
    const r = await codecall({}, 'keys', 'create', '--tenant', 'acme', '--db', db, '--name', 'ci', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(db)).toBe(true);
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({ tenant: 'acme', role: 'member' });
    expect(String(out.key)).toMatch(/^cc_[A-Za-z0-9_-]{40,}$/);
    expect(String(out.key_id)).toMatch(/^key_/);
    expect(r.stderr).toContain('cannot be shown again');

    const store = await createSqliteTaskStore({ path: db });
    try {
      expect(await store.findApiKey(hashApiKey(String(out.key)))).toMatchObject({
        id: out.key_id,
        tenant: 'acme',
        role: 'member',
        name: 'ci',
      });
    } finally {
      await store.close();
    }

    const plain = await codecall({}, 'keys', 'create', '--tenant', 'ops.team-1', '--admin', '--db', db);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^cc_\S+$/);
    expect(plain.stderr).toMatch(/created admin key key_\w+ for tenant ops\.team-1/);
  });

  it('lists keys without secrets or hashes, and revokes one', async () => {
    const listed = await codecall({}, 'keys', 'list', '--db', db, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const keys = lastJson(listed.stdout).keys as Record<string, unknown>[];
    expect(keys.map((k) => [k.tenant, k.role, k.revoked_at])).toEqual([
      ['acme', 'member', null],
      ['ops.team-1', 'admin', null],
    ]);
    expect(Object.keys(keys[0] ?? {}).sort()).toEqual(
      ['created_at', 'key_id', 'name', 'revoked_at', 'role', 'tenant'].sort(),
    );
    expect(listed.stdout).not.toMatch(/cc_|[0-9a-f]{64}/);

    const id = String(keys[0]?.key_id);
    const revoked = await codecall({}, 'keys', 'revoke', id, '--db', db);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(`key ${id} revoked`);
    const text = await codecall({}, 'keys', 'list', '--db', db);
    expect(text.stdout).toMatch(new RegExp(`^${id}  acme  member  ci  \\S+  revoked \\S+$`, 'm'));
    expect(text.stdout).toMatch(/^key_\w+  ops\.team-1  admin  -  \S+$/m);

    const unknown = await codecall({}, 'keys', 'revoke', 'key_nope', '--db', db);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('error NOT_FOUND');
  });

  it('refuses bad tenant names and a missing database with usage errors', async () => {
    for (const tenant of ['', 'a b', 'x'.repeat(65), 'acme/eu', 'é']) {
      const r = await codecall({}, 'keys', 'create', '--tenant', tenant, '--db', db);
      expect(r.code, tenant).toBe(2);
      expect(r.stderr).toContain('error INVALID_ARGUMENT: --tenant');
    }
    expect((await codecall({}, 'keys', 'create', '--tenant', 'x'.repeat(64), '--db', db)).code).toBe(0);
    const missing = await codecall({}, 'keys', 'list', '--db', join(dir, 'nope.db'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error NOT_FOUND');
    expect(existsSync(join(dir, 'nope.db'))).toBe(false);
    expect((await codecall({}, 'keys', 'create', '--db', db)).code).toBe(2);
  });
});
