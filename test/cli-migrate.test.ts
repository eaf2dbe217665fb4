import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { createPostgresTaskStore } from '../src/store/postgres/create-postgres-task-store.ts';
import type { TaskStore } from '../src/index.ts';
import { codeInput } from './conformance/task-store-conformance.ts';
import { assertBuilt, codecall, lastJson } from './cli-fixture.ts';
import { openForTampering } from './store/tamper.ts';
import { freshSchema, postgresSkipReason, postgresUrl } from './support/postgres-store.ts';

const url = postgresUrl();

/** A database with something of everything: keyed audit rows, journals, artifacts, a batch and its webhooks, keys. */
async function populate(path: string): Promise<string[]> {
  const store = await createSqliteTaskStore({ path, auditKey: Buffer.alloc(32, 7) });
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const t = await store.createTask(codeInput(`return ${i}`), {
      attributes: { tenant: i % 2 === 0 ? 'acme' : 'globex', priority: i % 3 },
      idempotency: { key: `k${i}`, requestHash: `h${i}` },
    });
    ids.push(t.id);
  }
  const { tasks } = await store.createBatch([{ input: codeInput() }, { input: codeInput() }], {
    tenant: 'acme',
    callbackUrl: 'https://hooks.example/batch',
  });
  ids.push(...tasks.map((t) => t.id));
  for (let n = 0; n < 10; n++) {
    const lease = await store.claimTask('worker', { leaseMs: 60_000 });
    if (lease === null) break;
    const clocks = Array.from({ length: n + 1 }, (_, c) => ({ type: 'clock' as const, data: { clock: c } }));
    await store.appendJournal(lease.taskId, clocks, { fencingToken: lease.fencingToken });
    await store.putArtifacts(
      lease.taskId,
      [{ name: `out-${n}.txt`, data: new TextEncoder().encode(`file ${n}`) }],
      {
        fencingToken: lease.fencingToken,
      },
    );
    if (n % 3 !== 2)
      await store.updateTask(
        lease.taskId,
        { status: 'succeeded', result: String(n) },
        { fencingToken: lease.fencingToken },
      );
  }
  for (const t of tasks) {
    const lease = await store.claimTask('worker', { leaseMs: 60_000, taskId: t.id });
    if (lease)
      await store.updateTask(
        t.id,
        { status: 'failed', error: { code: 'X', message: 'x' } },
        { fencingToken: lease.fencingToken },
      );
  }
  await store.createApiKey({
    id: 'key_1',
    keyHash: 'a'.repeat(64),
    tenant: 'acme',
    role: 'admin',
    name: 'ops',
  });
  await store.revokeApiKey('key_1');
  await store.createApiKey({ id: 'key_2', keyHash: 'b'.repeat(64), tenant: 'globex', role: 'member' });
  await store.close();
  return ids;
}

async function snapshot(store: TaskStore, ids: readonly string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const id of ids) {
    out.push(await store.getTask(id), await store.readJournal(id), await store.readAudit(id));
    const artifacts = store as TaskStore & { listArtifacts(id: string): Promise<unknown> };
    out.push(await artifacts.listArtifacts(id));
  }
  return out;
}

if (url === null) {
  describe('codecall migrate', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('codecall migrate', () => {
    let dir = '';
    let path = '';
    let ids: string[] = [];
    beforeAll(async () => {
      assertBuilt();
      dir = await mkdtemp(join(tmpdir(), 'codecall-migrate-'));
      path = join(dir, 'tasks.db');
      ids = await populate(path);
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('copies every table into PostgreSQL, where the store reads the same tasks, journals, audit logs and artifacts', async () => {
      const schema = freshSchema('mig');
      const run = await codecall({}, 'migrate', '--from', path, '--to', url, '--schema', schema, '--json');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = lastJson(run.stdout) as { ok: boolean; tables: { name: string; rows: number }[] };
      expect(report.ok).toBe(true);
      const rows = Object.fromEntries(report.tables.map((t) => [t.name, t.rows]));
      expect(rows).toMatchObject({ tasks: 14, api_keys: 2, idempotency_keys: 12, batches: 1, artifacts: 10 });
      expect(rows.webhook_outbox).toBeGreaterThan(0);
      const sqlite = await createSqliteTaskStore({ path, auditKey: null });
      const pg = await createPostgresTaskStore({ url, schema });
      try {
        expect(await snapshot(pg, ids)).toEqual(await snapshot(sqlite, ids));
        // The copy goes on working: a claim, an append and an end on PostgreSQL.
        const lease = await pg.claimTask('after', { leaseMs: 60_000 });
        expect(lease).not.toBeNull();
        const [entry] = await pg.appendJournal(
          lease?.taskId ?? '',
          [{ type: 'clock', data: { clock: 99 } }],
          {
            fencingToken: lease?.fencingToken ?? -1,
          },
        );
        expect(entry?.seq).toBeGreaterThan(1);
      } finally {
        await sqlite.close();
        await pg.close();
      }
    });

    it('says how far it is, and refuses a schema that is not empty', async () => {
      const schema = freshSchema('mig');
      const first = await codecall({}, 'migrate', '--from', path, '--to', url, '--schema', schema);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/every table read back identical/);
      expect(first.stderr).toMatch(/migrate: journal \d+\/\d+ rows/);
      const again = await codecall({}, 'migrate', '--from', path, '--to', url, '--schema', schema);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toMatch(/INVALID_ARGUMENT.*already holds tasks/);
    });

    it('copies nothing from a database whose journal was edited, naming the task', async () => {
      const damaged = join(dir, 'damaged.db');
      await populate(damaged);
      const t = openForTampering(damaged);
      const row = t.prepare("SELECT task_id FROM journal WHERE type = 'clock' LIMIT 1").get() as {
        task_id: string;
      };
      t.prepare("UPDATE journal SET data = '{\"clock\":42}' WHERE task_id = ? AND type = 'clock'").run(
        row.task_id,
      );
      t.close();
      const schema = freshSchema('mig');
      const run = await codecall({}, 'migrate', '--from', damaged, '--to', url, '--schema', schema);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/CHECKPOINT_CORRUPT/);
      expect(run.stderr).toContain(row.task_id);
      const pg = await createPostgresTaskStore({ url, schema });
      try {
        expect(await pg.countTasks()).toBe(0);
      } finally {
        await pg.close();
      }
    });

    it('refuses a target that is not a PostgreSQL URL, and a missing source', async () => {
      const notPg = await codecall({}, 'migrate', '--from', path, '--to', join(dir, 'other.db'));
      expect(notPg.code).not.toBe(0);
      expect(notPg.stderr).toMatch(/--to must be a postgres/);
      const missing = await codecall({}, 'migrate', '--from', join(dir, 'nope.db'), '--to', url);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/NOT_FOUND.*nope\.db/);
    });
  });
}
