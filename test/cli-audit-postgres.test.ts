import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore, verifyDatabaseAudit } from '../src/store/index.ts';
import { createPostgresTaskStore } from '../src/store/postgres/create-postgres-task-store.ts';
import { assertBuilt, codecall, lastJson } from './cli-fixture.ts';
import { codeInput } from './conformance/task-store-support.ts';
import { IDS, KEY, keyedWorkload, MEMBER, OTHER_KEY } from './support/keyed-workload.ts';
import { freshSchema, postgresSkipReason, postgresUrl, tamperPostgres } from './support/postgres-store.ts';

// `codecall audit verify --db postgres://... --schema S` (ADR 0030 on PostgreSQL): the unkeyed chains through a
// store and the keyed check with a key given on the command line or in the environment; and a keyed SQLite
// database copied by `codecall migrate` verifies clean on PostgreSQL with the same key. The built CLI, a real server.

interface Finding {
  source: string;
  task_id: string;
  seq: number;
  kind: string;
  field?: string;
}

const url = postgresUrl();
const HEX = KEY.toString('utf8');

if (url === null) {
  describe('codecall audit verify on PostgreSQL', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('codecall audit verify on PostgreSQL', () => {
    let dir = '';
    beforeAll(async () => {
      assertBuilt();
      dir = await mkdtemp(join(tmpdir(), 'codecall-audit-pg-'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    async function keyedSchema(): Promise<string> {
      const schema = freshSchema('cli');
      const store = await createPostgresTaskStore({ url: url ?? '', schema, auditKey: KEY });
      await keyedWorkload(store);
      await store.close();
      return schema;
    }

    async function verify(env: Record<string, string>, ...args: string[]) {
      const r = await codecall(env, 'audit', 'verify', '--db', url ?? '', ...args);
      return { ...r, out: r.stdout.trim().startsWith('{') ? lastJson(r.stdout) : {} };
    }

    it('verifies a keyed schema clean with the key from --key, --key-file or the environment', async () => {
      const schema = await keyedSchema();
      const file = join(dir, 'pg.audit-key');
      await writeFile(file, `${HEX}\n`, { mode: 0o600 });
      for (const [env, args] of [
        [{}, ['--key', HEX]],
        [{}, ['--key-file', file]],
        [{ CODECALL_AUDIT_KEY: HEX }, []],
        [{ CODECALL_AUDIT_KEY_FILE: file }, []],
      ] as const) {
        const r = await verify(env, '--schema', schema, ...args, '--json');
        expect(r.code, r.stderr + r.stdout).toBe(0);
        expect(r.out).toMatchObject({ ok: true, keyed: true, tasks: 4, keyed_audit_entries: 12, broken: [] });
      }
      const text = await verify({}, '--schema', schema);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('note: no audit key given (--key, --key-file, CODECALL_AUDIT_KEY');
      expect(text.stdout).toContain('all chains intact');
    });

    it('names tampering: keyed findings, an unkeyed chain broken, and a wrong key', async () => {
      const schema = await keyedSchema();
      await tamperPostgres(schema, async (c) => {
        await c.query("UPDATE tasks SET tenant = 'mallory' WHERE id = $1", [IDS.ok]);
        await c.query(`UPDATE journal SET data = '{"clock":9}' WHERE task_id = $1 AND seq = 2`, [IDS.other]);
        await c.query("UPDATE api_keys SET role = 'admin' WHERE id = $1", [MEMBER.id]);
      });
      const r = await verify({}, '--schema', schema, '--key', HEX, '--json');
      expect(r.code).toBe(1);
      const found = (r.out.broken as Finding[]).map((f) => [f.source, f.task_id, f.kind, f.field]);
      // The journal edit left its checksum (which the keyed pin covers): the unkeyed chain names it.
      expect(found).toEqual(
        expect.arrayContaining([
          ['chain', IDS.other, 'chain', undefined],
          ['keyed', IDS.ok, 'task_field_modified', 'tenant'],
          ['keyed', '-', 'key_modified', MEMBER.id],
        ]),
      );
      const wrong = await verify({}, '--schema', schema, '--key', OTHER_KEY.toString('utf8'), '--json');
      expect(wrong.code).toBe(1);
      expect((wrong.out.broken as Finding[]).filter((f) => f.source === 'keyed').map((f) => f.kind)).toEqual([
        'key_mismatch',
      ]);
    });

    it('refuses a schema codecall never made (without making it), an anchor, and a missing key file', async () => {
      const missing = freshSchema('nope');
      const r = await verify({}, '--schema', missing, '--key', HEX);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`no codecall schema "${missing}"`);
      const again = await verify({}, '--schema', missing);
      expect(again.stderr).toContain('NOT_FOUND');
      await tamperPostgres(missing, async (c) => {
        const made = await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [missing]);
        expect(made.rowCount).toBe(0);
      });
      const anchor = await verify({}, '--anchor', join(dir, 'a.json'));
      expect(anchor.stderr).toContain('--anchor is for SQLite databases');
      const nofile = await verify({}, '--key-file', join(dir, 'absent'));
      expect(nofile.stderr).toContain('no audit key file');
    });

    it('a keyed SQLite database migrated to PostgreSQL verifies clean there with the same key, and goes on keyed', async () => {
      const path = join(dir, 'tasks.db');
      const sqlite = await createSqliteTaskStore({ path, auditKey: KEY });
      await keyedWorkload(sqlite);
      await sqlite.close();
      await writeFile(`${path}.audit-key`, `${HEX}\n`, { mode: 0o600 });
      const before = await verifyDatabaseAudit({ path, key: KEY });
      expect(before.findings).toEqual([]);
      const schema = freshSchema('mig');
      const m = await codecall(
        {},
        'migrate',
        '--from',
        path,
        '--to',
        url ?? '',
        '--schema',
        schema,
        '--json',
      );
      expect(m.code, m.stderr).toBe(0);
      const r = await verify({}, '--schema', schema, '--key-file', `${path}.audit-key`, '--json');
      expect(r.code, r.stdout).toBe(0);
      expect(r.out).toMatchObject({
        ok: true,
        keyed: true,
        keyed_audit_entries: before.keyedRows,
        broken: [],
      });
      // A node on the copy with the same key: the key rows still authenticate, new rows chain on keyed.
      const pg = await createPostgresTaskStore({ url: url ?? '', schema, auditKey: KEY });
      expect(await pg.findApiKey(MEMBER.hash)).toMatchObject({ id: MEMBER.id, role: 'member' });
      const t = await pg.createTask(codeInput('return 5'));
      const lease = await pg.claimTask('after', { leaseMs: 60_000, taskId: t.id });
      await pg.updateTask(
        t.id,
        { status: 'succeeded', result: '5' },
        { fencingToken: lease?.fencingToken ?? 0 },
      );
      await pg.close();
      const after = await verify({ CODECALL_AUDIT_KEY: HEX }, '--schema', schema, '--json');
      expect(after.code, after.stdout).toBe(0);
      expect(after.out).toMatchObject({ ok: true, tasks: 5, keyed_audit_entries: before.keyedRows + 3 });
      await expect(
        createPostgresTaskStore({ url: url ?? '', schema, auditKey: OTHER_KEY }),
      ).rejects.toMatchObject({
        code: 'AUDIT_KEY_MISMATCH',
      });
    });
  });
}
