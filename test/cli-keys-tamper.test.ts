import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/auth/api-keys.ts';
import { isCodecallError } from '../src/errors/index.ts';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { tamperedCopy } from './store/tamper.ts';

// API key rows carry a MAC with the audit key (ADR 0030 update): a key whose role, tenant or revocation was edited
// in the file, or one put in without the key, authenticates no one (UNAUTHORIZED naming it), and `codecall audit
// verify` names each as key_modified. Real database files, edited through a connection of their own.

interface Finding {
  source: string;
  kind: string;
  field?: string;
  message: string;
}

describe('API keys edited behind the server', () => {
  let dir: string;
  let pristine: string;
  let member: { key: string; id: string };
  let revoked: { key: string; id: string };
  beforeAll(async () => {
    dir = await cliTestDir('cli-keys-tamper');
    pristine = join(dir, 'service.db');
    const create = async (role: string) => {
      const r = await codecall(
        {},
        'keys',
        'create',
        '--tenant',
        'acme',
        '--role',
        role,
        '--db',
        pristine,
        '--json',
      );
      expect(r.code, r.stderr).toBe(0);
      const out = lastJson(r.stdout);
      return { key: String(out.key), id: String(out.key_id) };
    };
    member = await create('member');
    revoked = await create('member');
    expect((await codecall({}, 'keys', 'revoke', revoked.id, '--db', pristine)).code).toBe(0);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tampered = (edit: (db: Database.Database) => void): Promise<string> =>
    tamperedCopy(pristine, dir, edit);

  /** What the store's key lookup (each request's authentication) answers for `key` on the file at `path`. */
  async function lookup(path: string, key: string): Promise<string> {
    const store = await createSqliteTaskStore({ path });
    try {
      const found = await store.findApiKey(hashApiKey(key));
      return found === null ? 'unknown' : `${found.tenant}/${found.role}`;
    } catch (e) {
      return isCodecallError(e) ? `${e.code}: ${e.message}` : String(e);
    } finally {
      await store.close();
    }
  }

  async function keyFindings(path: string): Promise<Finding[]> {
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--json');
    expect(r.code).toBe(1);
    return (lastJson(r.stdout).broken as Finding[]).filter((f) => f.kind === 'key_modified');
  }

  it('an untouched file authenticates its live key and verifies clean', async () => {
    const path = await tampered(() => undefined);
    expect(await lookup(path, member.key)).toBe('acme/member');
    expect(await lookup(path, revoked.key)).toBe('unknown');
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--json');
    expect(lastJson(r.stdout).broken).toEqual([]);
  });

  it('a role raised to admin: refused, and named', async () => {
    const path = await tampered((db) =>
      db.prepare("UPDATE api_keys SET role = 'admin' WHERE id = ?").run(member.id),
    );
    expect(await lookup(path, member.key)).toMatch(/^UNAUTHORIZED: API key .* does not verify/);
    expect(await keyFindings(path)).toContainEqual(expect.objectContaining({ field: member.id }));
  });

  it('a key moved to another tenant, or its revocation undone: refused, and named', async () => {
    const path = await tampered((db) => {
      db.prepare("UPDATE api_keys SET tenant = 'other' WHERE id = ?").run(member.id);
      db.prepare('UPDATE api_keys SET revoked_at = NULL WHERE id = ?').run(revoked.id);
    });
    expect(await lookup(path, member.key)).toMatch(/^UNAUTHORIZED/);
    expect(await lookup(path, revoked.key)).toMatch(/^UNAUTHORIZED/);
    const fields = (await keyFindings(path)).map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining([member.id, revoked.id]));
  });

  it('a key put in without the audit key: refused, and named', async () => {
    const path = await tampered((db) => {
      db.prepare(
        "INSERT INTO api_keys (id, key_hash, tenant, role, name, created_at) VALUES ('key_forged', ?, 'acme', 'admin', null, 1)",
      ).run(hashApiKey('cc_forged_key_for_the_test'));
    });
    expect(await lookup(path, 'cc_forged_key_for_the_test')).toMatch(/^UNAUTHORIZED/);
    expect(await keyFindings(path)).toContainEqual(
      expect.objectContaining({
        field: 'key_forged',
        message: expect.stringMatching(/without the audit key/) as unknown,
      }),
    );
  });
});
