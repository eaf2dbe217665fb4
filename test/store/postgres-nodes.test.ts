import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { journalChecksumOfText } from '../../src/store/journal-checksum.ts';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { PG_SCHEMA_VERSION } from '../../src/store/postgres/pg-migrations.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import type { CodecallError } from '../../src/errors/index.ts';
import { codeInput } from '../conformance/task-store-conformance.ts';
import { freshSchema, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

const url = postgresUrl();
const stores: PostgresTaskStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function open(schema: string, poolSize = 4): Promise<PostgresTaskStore> {
  const store = await createPostgresTaskStore({ url: url ?? '', schema, poolSize });
  stores.push(store);
  return store;
}

/** A node of its own: a child process with its own pool, claiming until nothing is left. */
function startNode(
  schema: string,
  owner: string,
  options: object = {},
): { ready: Promise<void>; go: () => void; done: Promise<string[]> } {
  const child = spawn(process.execPath, [
    '--import',
    'tsx',
    join(import.meta.dirname, 'pg-claim-worker.ts'),
    url ?? '',
    schema,
    owner,
    JSON.stringify(options),
  ]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const ready = new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('ready')) resolve();
    });
  });
  const done = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`node ${owner} exited ${String(code)}: ${stderr}`);
    return JSON.parse(stdout) as string[];
  });
  return { ready, go: () => child.stdin.end('go'), done };
}

async function race(schema: string, options: object = {}): Promise<string[][]> {
  const nodes = ['n1', 'n2', 'n3'].map((owner) => startNode(schema, owner, options));
  await Promise.all(nodes.map((n) => n.ready));
  for (const n of nodes) n.go();
  return Promise.all(nodes.map((n) => n.done));
}

/** A plain client on the schema: what any program with the database's password can do, triggers on. */
async function direct<T>(schema: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url ?? '', options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe.skipIf(url === null)('PostgreSQL store across nodes', () => {
  it(
    'three nodes claiming at once never take one task twice, and take them all',
    { timeout: 60_000 },
    async () => {
      const schema = freshSchema('claims');
      const store = await open(schema);
      const ids = new Set<string>();
      for (let i = 0; i < 60; i++) ids.add((await store.createTask(codeInput(`return ${i}`))).id);
      const claimed = (await race(schema)).flat();
      expect(claimed).toHaveLength(60);
      expect(new Set(claimed)).toEqual(ids);
    },
  );

  it('holds maxRunning and maxPerTenant over every node', { timeout: 60_000 }, async () => {
    const schema = freshSchema('caps');
    const store = await open(schema);
    for (let i = 0; i < 20; i++)
      await store.createTask(codeInput(), { attributes: { tenant: i % 2 === 0 ? 'a' : 'b' } });
    // Claimed tasks are never ended: a node that passed a cap would hold more than the cap allows.
    const claimed = (await race(schema, { maxRunning: 7, maxPerTenant: 3 })).flat();
    expect(claimed).toHaveLength(6);
    const running = await store.listTasks({ status: 'running', limit: 100 });
    const perTenant = new Map<string, number>();
    for (const t of running.tasks) perTenant.set(t.tenant, (perTenant.get(t.tenant) ?? 0) + 1);
    expect(Object.fromEntries(perTenant)).toEqual({ a: 3, b: 3 });
    const capped = (await race(schema, { maxRunning: 7 })).flat();
    expect(capped).toHaveLength(1);
    expect(await store.countTasks({ status: 'running' })).toBe(7);
  });

  it('the database refuses a broken chain, a stale token and any rewrite, whoever writes', async () => {
    const schema = freshSchema('enforce');
    const store = await open(schema);
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 60_000 });
    const [head] = await store.appendJournal(task.id, [{ type: 'clock', data: { clock: 1 } }], {
      fencingToken: lease?.fencingToken ?? -1,
    });
    const text = '{"clock":2}';
    const good = journalChecksumOfText(head?.checksum ?? '', 3, 'clock', text);
    const insert = (seq: number, checksum: string, token: number) =>
      direct(schema, (c) =>
        c.query(
          `INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
           VALUES ($1, $2, 'clock', $3, 0, $4, $5)`,
          [task.id, seq, checksum, token, text],
        ),
      );
    const token = lease?.fencingToken ?? -1;
    await expect(insert(3, 'f'.repeat(64), token)).rejects.toThrow(/does not chain/);
    await expect(insert(4, journalChecksumOfText(good, 4, 'clock', text), token)).rejects.toThrow(
      /does not follow/,
    );
    await expect(insert(3, good, token - 1)).rejects.toThrow(/fencing token/);
    // Checked per statement over all its rows: a good row does not carry a bad one written with it.
    const text4 = '{"clock":3}';
    const insertTwo = (second: string) =>
      direct(schema, (c) =>
        c.query(
          `INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
           VALUES ($1, 3, 'clock', $2, 0, $3, $4), ($1, 4, 'clock', $5, 0, $3, $6)`,
          [task.id, good, token, text, second, text4],
        ),
      );
    await expect(insertTwo('0'.repeat(64))).rejects.toThrow(/entry 4 of task .* does not chain/);
    const audit = (await direct(schema, (c) =>
      c.query('SELECT seq, checksum FROM audit_log WHERE task_id = $1 ORDER BY seq DESC LIMIT 1', [task.id]),
    )) as { rows: { seq: number; checksum: string }[] };
    const last = audit.rows[0];
    expect(last).toBeDefined();
    const auditInsert = (seq: number, checksum: string) =>
      direct(schema, (c) =>
        c.query(
          `INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ($1, $2, 'note', '{}', $3, 0)`,
          [task.id, seq, checksum],
        ),
      );
    await expect(auditInsert((last?.seq ?? 0) + 1, 'f'.repeat(64))).rejects.toThrow(
      /audit_log .* does not chain/,
    );
    await expect(auditInsert((last?.seq ?? 0) + 2, 'f'.repeat(64))).rejects.toThrow(/does not follow/);
    for (const statement of [
      `UPDATE journal SET data = '{"clock":9}' WHERE task_id = $1`,
      'DELETE FROM journal WHERE task_id = $1',
      `UPDATE audit_log SET data = '{}' WHERE task_id = $1`,
      'DELETE FROM audit_log WHERE task_id = $1',
    ]) {
      await expect(direct(schema, (c) => c.query(statement, [task.id]))).rejects.toThrow(/append-only/);
    }
    await expect(direct(schema, (c) => c.query('TRUNCATE journal CASCADE'))).rejects.toThrow(/append-only/);
    await expect(
      direct(schema, (c) => c.query('DELETE FROM tasks WHERE id = $1', [task.id])),
    ).rejects.toThrow(/has a journal, which is append-only/);
    await expect(
      direct(schema, (c) =>
        c.query(
          `INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
           VALUES ('task_missing', 1, 'clock', $1, 0, 1, $2)`,
          [journalChecksumOfText('', 1, 'clock', text), text],
        ),
      ),
    ).rejects.toThrow(/names task task_missing, which does not exist/);
    // The chain the store wrote is intact, and a well-formed entry under the current token is accepted.
    await insert(3, good, token);
    expect((await store.readJournal(task.id)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('the chain check computes checksums inline, as the client does (ADR 0050)', async () => {
    const schema = freshSchema('inline');
    const store = await open(schema);
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 60_000 });
    const written = await store.appendJournal(
      task.id,
      [
        { type: 'clock', data: { clock: 1 } },
        { type: 'tool_outcome', data: { call_id: 'c1', ok: true, payload: '"ü\\n😀"' } },
      ],
      { fencingToken: lease?.fencingToken ?? -1 },
    );
    // The database's checksum of each entry over the one before is the one the client computed.
    const rows = await direct(schema, (c) =>
      c.query<{ seq: number; checksum: string; again: string }>(
        `SELECT j.seq, j.checksum, chain_checksum(coalesce(p.checksum, ''), j.seq, j.type, j.data) AS again
         FROM journal AS j LEFT JOIN journal AS p ON p.task_id = j.task_id AND p.seq = j.seq - 1
         WHERE j.task_id = $1 ORDER BY j.seq`,
        [task.id],
      ),
    );
    expect(rows.rows.map((r) => r.again)).toEqual(rows.rows.map((r) => r.checksum));
    expect(rows.rows.slice(-2).map((r) => r.checksum)).toEqual(written.map((e) => e.checksum));
    // Inlined: the plan shows the expression, not a call of the SQL function per entry (its executor's set-up
    // per call was most of the check's time).
    const plan = await direct(schema, (c) =>
      c.query<{ 'QUERY PLAN': string }>(
        "EXPLAIN (VERBOSE) SELECT chain_checksum('', seq, type, data) FROM journal",
      ),
    );
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toMatch(/sha256\(/);
    expect(text).not.toMatch(/chain_checksum\(/);
  });

  it('migrates once when nodes start together, and refuses a schema from a newer codecall', async () => {
    const schema = freshSchema('migrate');
    await Promise.all([open(schema, 1), open(schema, 1), open(schema, 1)]);
    const versions = await direct(schema, (c) =>
      c.query<{ version: number }>('SELECT version FROM schema_version'),
    );
    expect(versions.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
    await direct(schema, (c) => c.query('UPDATE schema_version SET version = version + 1'));
    const refused = await createPostgresTaskStore({ url: url ?? '', schema }).then(
      () => null,
      (e: unknown) => e as CodecallError,
    );
    expect(refused?.code).toBe('STORE_ERROR');
    expect(refused?.message).toMatch(/newer than this codecall supports/);
  });

  it('a node stopped in the middle of a claim holds nobody up past its idle-in-transaction timeout', async () => {
    const schema = freshSchema('frozen');
    const frozen = await createPostgresTaskStore({ url: url ?? '', schema, idleInTransactionTimeoutMs: 300 });
    stores.push(frozen);
    const other = await open(schema);
    await other.createTask(codeInput());
    // What a SIGSTOP between two statements of a claim leaves: a transaction holding the claim lock, silent.
    const client = await frozen.pool.connect();
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('codecall.claim.' || current_schema()))");
    client.on('error', () => undefined);
    const lease = await other.claimTask('live', { leaseMs: 60_000, maxRunning: 4 });
    expect(lease).not.toBeNull();
    // The stopped node's connection was ended by the server: it learns so on its next statement.
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release(true);
  });

  it("a lease holder's remembered journal head gone stale (another node appended) costs a retry, never a bad chain", async () => {
    const schema = freshSchema('heads');
    const a = await open(schema);
    const b = await open(schema);
    const task = await a.createTask(codeInput());
    const lease = await a.claimTask('node-a', { leaseMs: 60_000 });
    const token = lease?.fencingToken ?? -1;
    const clock = (n: number) => [{ type: 'clock' as const, data: { clock: n } }];
    await a.appendJournal(task.id, clock(1), { fencingToken: token });
    await a.appendJournal(task.id, clock(2), { fencingToken: token });
    // Behind A's back: B appends under the same token (what a decision written elsewhere does to the journal).
    await b.appendJournal(task.id, clock(3), { fencingToken: token });
    const [next] = await a.appendJournal(task.id, clock(4), { fencingToken: token });
    expect(next?.seq).toBe(5);
    await a.appendJournal(task.id, clock(5), { fencingToken: token });
    const journal = await b.readJournal(task.id);
    expect(journal.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // The summary views read is of the head, or none (then rebuilt): never one of an older head.
    const summary = await b.readJournalSummary(task.id);
    if (summary !== null) expect(summary.seq).toBe(6);
    // A stale token is refused whatever the node remembers.
    await b.claimTask('node-b', { leaseMs: 60_000, taskId: task.id, now: Date.now() + 120_000 });
    await expect(a.appendJournal(task.id, clock(6), { fencingToken: token })).rejects.toMatchObject({
      code: 'FENCED',
    });
  });

  it('is STORE_UNAVAILABLE, naming the server without its password, when nothing listens', async () => {
    const error = await createPostgresTaskStore({
      url: 'postgres://codecall:hunter2@127.0.0.1:1/codecall',
      connectTimeoutMs: 2000,
    }).then(
      () => null,
      (e: unknown) => e as CodecallError,
    );
    expect(error?.code).toBe('STORE_UNAVAILABLE');
    expect(JSON.stringify(error?.details)).not.toContain('hunter2');
    expect(JSON.stringify(error?.details)).toContain('127.0.0.1:1');
  });

  it(
    'a change feed on one node sees every change made on others, at its latest',
    { timeout: 60_000 },
    async () => {
      const schema = freshSchema('feed');
      const reader = await open(schema);
      const writers = await Promise.all([open(schema), open(schema), open(schema)]);
      let cursor = (await reader.readChanges({ after: null })).cursor;
      let statusCursor = (await reader.readStatusChanges({ after: null })).cursor;
      const seen = new Map<string, string>();
      const statusSeen = new Map<string, string>();
      let writing = true;
      const poll = async (): Promise<void> => {
        const page = await reader.readChanges({ after: cursor, limit: 7 });
        for (const c of page.changes) seen.set(c.taskId, `${c.status}/${c.journalEntries}`);
        cursor = page.cursor;
        const status = await reader.readStatusChanges({ after: statusCursor, limit: 5 });
        for (const t of status.tasks)
          statusSeen.set('id' in t.task ? t.task.id : t.task.taskId, t.task.status);
        statusCursor = status.cursor;
      };
      const polling = (async () => {
        while (writing) await poll();
      })();
      // Each writer node creates tasks, claims them, appends, and ends them, all at once with the others.
      await Promise.all(
        writers.map(async (w, n) => {
          for (let i = 0; i < 15; i++) {
            await w.createTask(codeInput(`return ${n * 100 + i}`));
            const lease = await w.claimTask(`node${n}`, { leaseMs: 60_000 });
            if (lease === null) continue;
            await w.appendJournal(lease.taskId, [{ type: 'clock', data: { clock: i } }], {
              fencingToken: lease.fencingToken,
            });
            if (i % 3 !== 0)
              await w.updateTask(
                lease.taskId,
                { status: 'succeeded', result: '1' },
                { fencingToken: lease.fencingToken },
              );
          }
        }),
      );
      writing = false;
      await polling;
      for (let i = 0; i < 5; i++) await poll();
      const all = await reader.listTasks({ limit: 100 });
      expect(all.tasks).toHaveLength(45);
      for (const t of all.tasks) {
        const journal = await reader.readJournal(t.id);
        expect(seen.get(t.id)).toBe(`${t.status}/${journal.length}`);
        expect(statusSeen.get(t.id)).toBe(t.status);
      }
    },
  );
});

if (url === null) {
  describe('PostgreSQL store across nodes', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
}
