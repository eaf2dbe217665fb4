import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { createSqliteTaskStore, SCHEMA_VERSION } from '../../src/store/index.ts';
import type { SqliteTaskStore } from '../../src/store/index.ts';
import { journalChecksumOfText } from '../../src/store/journal-checksum.ts';
import { codeInput, describeTaskStoreConformance } from '../conformance/task-store-conformance.ts';
import { openForTampering } from './tamper.ts';

/** Starts a claim worker process; resolves `ready` once its store is open, `done` with the ids it claimed. */
function startWorker(
  path: string,
  owner: string,
): { ready: Promise<void>; go: () => void; done: Promise<string[]> } {
  const child = spawn(process.execPath, [
    '--import',
    'tsx',
    join(import.meta.dirname, 'claim-worker.ts'),
    path,
    owner,
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
    if (code !== 0) throw new Error(`claim worker ${owner} exited ${String(code)}: ${stderr}`);
    return JSON.parse(stdout) as string[];
  });
  return { ready, go: () => child.stdin.end('go'), done };
}
let dir = '';
let fileCount = 0;
const nextPath = (): string => join(dir, `store-${++fileCount}.db`);
const paths = new Map<object, string>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-sqlite-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeTaskStoreConformance(
  'SQLite',
  async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    paths.set(store, path);
    return store;
  },
  {
    // Edit the row through a second connection, as a bad disk or a stray tool would.
    corrupt: (store, taskId, seq) => {
      const db = openForTampering(paths.get(store) ?? '');
      db.prepare('UPDATE journal SET data = ? WHERE task_id = ? AND seq = ?').run(
        '{"clock":999}',
        taskId,
        seq,
      );
      db.close();
      return Promise.resolve();
    },
    garbleRow: (store, taskId) => {
      const db = openForTampering(paths.get(store) ?? '');
      db.prepare('UPDATE tasks SET input = \'{"kind":\' WHERE id = ?').run(taskId);
      db.close();
      return Promise.resolve();
    },
  },
);

describeTaskStoreConformance('SQLite :memory:', () => createSqliteTaskStore({ path: ':memory:' }));

describe('SQLite task store', () => {
  it('keeps tasks and journals across close and reopen', async () => {
    const path = nextPath();
    const first = await createSqliteTaskStore({ path });
    const task = await first.createTask(codeInput());
    const lease = await first.claimTask('w', { leaseMs: 1000 });
    await first.appendJournal(task.id, [{ type: 'clock', data: { clock: 1 } }], {
      fencingToken: lease?.fencingToken ?? -1,
    });
    await first.close();
    const second = await createSqliteTaskStore({ path });
    expect(await second.getTask(task.id)).toMatchObject({ id: task.id, status: 'running', attempts: 1 });
    expect((await second.readJournal(task.id)).map((e) => e.type)).toEqual(['task_input', 'clock']);
    await second.close();
  });

  it('commits creations made together as one group; a refused one fails alone', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    const idem = (key: string, requestHash: string) => ({ idempotency: { key, requestHash } });
    // One event-loop turn: 20 plain creations, 5 with one key and request, one with that key and another request.
    const results = await Promise.allSettled([
      ...Array.from({ length: 20 }, (_, i) => store.createTask(codeInput(`return ${i}`))),
      ...Array.from({ length: 5 }, () => store.createTask(codeInput('return "k"'), idem('k', 'h1'))),
      store.createTask(codeInput('return "other"'), idem('k', 'h2')),
    ]);
    const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(ok).toHaveLength(25);
    expect(new Set(ok.slice(20).map((t) => t.id)).size).toBe(1);
    const refused = results.at(-1);
    expect(refused?.status === 'rejected' && (refused.reason as CodecallError).code).toBe(
      'IDEMPOTENCY_CONFLICT',
    );
    await store.close();
    // All of them are durable: a second connection sees 21 tasks, in creation order.
    const again = await createSqliteTaskStore({ path });
    const { tasks } = await again.listTasks({ limit: 100 });
    expect(tasks.map((t) => t.id)).toEqual([...new Set(ok.map((t) => t.id))]);
    await again.close();
  });

  it('uses WAL and applies migrations once', async () => {
    const path = nextPath();
    await (await createSqliteTaskStore({ path })).close();
    await (await createSqliteTaskStore({ path })).close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SCHEMA_VERSION }]);
    db.close();
  });

  it('refuses a database from a newer codecall', async () => {
    const path = nextPath();
    await (await createSqliteTaskStore({ path })).close();
    const db = openForTampering(path);
    db.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION + 1);
    db.close();
    const error = await createSqliteTaskStore({ path }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodecallError);
    expect((error as CodecallError).code).toBe('STORE_ERROR');
    expect((error as CodecallError).details).toMatchObject({ schemaVersion: SCHEMA_VERSION + 1 });
  });

  it('detects a deleted journal row as a gap', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    const clocks = [1, 2, 3].map((clock) => ({ type: 'clock' as const, data: { clock } }));
    await store.appendJournal(task.id, clocks, { fencingToken: lease?.fencingToken ?? -1 });
    const db = openForTampering(path);
    db.prepare('DELETE FROM journal WHERE task_id = ? AND seq = 2').run(task.id);
    db.close();
    const error = await store.readJournal(task.id).catch((e: unknown) => e);
    expect((error as CodecallError).code).toBe('CHECKPOINT_CORRUPT');
    expect((error as CodecallError).details).toEqual({ taskId: task.id, seq: 2, log: 'journal' });
    await store.close();
  });

  it('verifies rows by their stored text, and rows rewritten in an equal non-canonical form by their data', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    const entries = [{ type: 'tool_outcome' as const, data: { call_id: 'call-1', ok: true, payload: '1' } }];
    await store.appendJournal(task.id, entries, { fencingToken: lease?.fencingToken ?? -1 });
    const db = openForTampering(path);
    const rewrite = db.prepare('UPDATE journal SET data = ? WHERE task_id = ? AND seq = 2');
    // Same data, other key order and spacing (as a dump and reload might leave it): still verifies.
    rewrite.run('{ "payload": "1", "ok": true, "call_id": "call-1" }', task.id);
    expect((await store.readJournal(task.id))[1]?.data).toEqual(entries[0]?.data);
    rewrite.run('{"call_id":"call-1","ok":false,"payload":"1"}', task.id);
    db.close();
    const error = await store.readJournal(task.id).catch((e: unknown) => e);
    expect((error as CodecallError).code).toBe('CHECKPOINT_CORRUPT');
    await store.close();
  });

  it('parses entries as it reads them: a well-chained entry that is none of the types is CHECKPOINT_CORRUPT', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    const entries = [{ type: 'clock' as const, data: { clock: 1 } }];
    const [written] = await store.appendJournal(task.id, entries, {
      fencingToken: lease?.fencingToken ?? -1,
    });
    const [first] = await store.readJournal(task.id);
    // Rewritten with a checksum that matches: only the parse can tell (a writer with another idea of the types).
    const db = openForTampering(path);
    const rewrite = db.prepare(
      'UPDATE journal SET type = ?, data = ?, checksum = ? WHERE task_id = ? AND seq = 2',
    );
    const forge = (type: string, data: string) =>
      rewrite.run(type, data, journalChecksumOfText(first?.checksum ?? '', 2, type, data), task.id);
    const cases: [string, string, string][] = [
      ['tool_intent', '{"args":"[]","call_id":"call-1"}', 'tool_intent.tool is not a string'],
      ['tool_outcome', '{"call_id":"call-1","ok":"yes","payload":"1"}', 'tool_outcome.ok is not a boolean'],
      ['control', '{"action":"pasue"}', 'control action "pasue" is not known'],
      ['control', '{"action":"retry_started"}', 'control retry_started.call_id is not a string'],
      ['lunch', '{}', 'entry type "lunch" is not known'],
    ];
    for (const [type, data, why] of cases) {
      forge(type, data);
      const error = await store.readJournal(task.id).catch((e: unknown) => e);
      expect((error as CodecallError).code).toBe('CHECKPOINT_CORRUPT');
      expect((error as CodecallError).details).toEqual({ taskId: task.id, seq: 2, log: 'journal' });
      expect((error as CodecallError).message).toBe(`Journal of task ${task.id} is corrupt at seq 2: ${why}`);
    }
    forge('clock', '{"clock":1}');
    expect((await store.readJournal(task.id))[1]).toEqual(written);
    db.close();
    await store.close();
  });

  /** A task with a created link and two status links, in a file to tamper with. */
  async function auditedTask(): Promise<{ path: string; store: SqliteTaskStore; id: string }> {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    const task = await store.createTask(codeInput(), { actor: 'key_alice' });
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    await store.updateTask(
      task.id,
      { status: 'succeeded', result: '1' },
      {
        fencingToken: lease?.fencingToken ?? -1,
      },
    );
    expect((await store.readAudit(task.id)).map((e) => e.seq)).toEqual([1, 2, 3]);
    return { path, store, id: task.id };
  }

  async function expectAuditCorrupt(store: SqliteTaskStore, id: string, seq: number, afterSeq = 0) {
    const error = await store.readAudit(id, { afterSeq }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodecallError);
    expect((error as CodecallError).code).toBe('CHECKPOINT_CORRUPT');
    expect((error as CodecallError).details).toEqual({ taskId: id, seq, log: 'audit' });
  }

  it('detects a rewritten audit link, also when reading after it', async () => {
    const { path, store, id } = await auditedTask();
    const db = openForTampering(path);
    // Someone else claims the creation: the data changes, the checksum cannot follow.
    db.prepare('UPDATE audit_log SET data = replace(data, ?, ?) WHERE task_id = ? AND seq = 1').run(
      'key_alice',
      'key_mallory',
      id,
    );
    db.close();
    await expectAuditCorrupt(store, id, 1);
    await expectAuditCorrupt(store, id, 1, 2);
    await store.close();
  });

  it('detects a rewritten audit link whose checksum was recomputed on its own, at the next link', async () => {
    const { path, store, id } = await auditedTask();
    const db = openForTampering(path);
    const second = db.prepare('SELECT data FROM audit_log WHERE task_id = ? AND seq = 2').get(id) as {
      data: string;
    };
    const forged = second.data.replace('"actor":"w"', '"actor":"x"');
    const first = db.prepare('SELECT checksum FROM audit_log WHERE task_id = ? AND seq = 1').get(id) as {
      checksum: string;
    };
    db.prepare('UPDATE audit_log SET data = ?, checksum = ? WHERE task_id = ? AND seq = 2').run(
      forged,
      journalChecksumOfText(first.checksum, 2, 'status', forged),
      id,
    );
    db.close();
    // The forged link verifies; the chain breaks at the one after it.
    await expectAuditCorrupt(store, id, 3);
    await store.close();
  });

  it('detects a deleted audit link as a gap', async () => {
    const { path, store, id } = await auditedTask();
    const db = openForTampering(path);
    db.prepare('DELETE FROM audit_log WHERE task_id = ? AND seq = 2').run(id);
    db.close();
    await expectAuditCorrupt(store, id, 2);
    await store.close();
  });

  it('stores nothing of a batch one of whose tasks cannot be stored', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    // A STRICT column refuses a fractional priority: the third insert fails after two succeeded.
    const error = await store
      .createBatch(
        [
          { input: codeInput() },
          { input: codeInput(), attributes: { callbackUrl: 'https://hooks.example/t' } },
          { input: codeInput(), attributes: { priority: 1.5 } },
        ],
        { tenant: 'acme', id: 'batch_bad', callbackUrl: 'https://hooks.example/b' },
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_ERROR' });
    expect(await store.getBatch('batch_bad')).toBeNull();
    expect((await store.listTasks()).tasks).toEqual([]);
    await store.close();
    const db = new Database(path, { readonly: true });
    for (const table of ['batches', 'tasks', 'journal', 'audit_log', 'webhook_outbox']) {
      expect(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()).toEqual({ n: 0 });
    }
    db.close();
  });

  it('maps a lock timeout to a retryable STORE_ERROR', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path, busyTimeoutMs: 20 });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await store.claimTask('w', { leaseMs: 1000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CodecallError);
      expect(error).toMatchObject({
        code: 'STORE_ERROR',
        retryable: true,
        details: { sqliteCode: 'SQLITE_BUSY' },
      });
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await store.close();
    }
  });

  it('commits appends still queued at close, and they are there after reopening', async () => {
    const path = nextPath();
    const first = await createSqliteTaskStore({ path });
    const task = await first.createTask(codeInput());
    const lease = await first.claimTask('w', { leaseMs: 1000 });
    const fencingToken = lease?.fencingToken ?? -1;
    const pending = [1, 2, 3].map((clock) =>
      first.appendJournal(task.id, [{ type: 'clock', data: { clock } }], { fencingToken }),
    );
    await first.close();
    expect((await Promise.all(pending)).map((entries) => entries[0]?.seq)).toEqual([2, 3, 4]);
    const second = await createSqliteTaskStore({ path });
    const clocks = (await second.readJournal(task.id)).map((e) => (e.type === 'clock' ? e.data.clock : null));
    expect(clocks).toEqual([null, 1, 2, 3]);
    await second.close();
  });

  it('runs operations in call order: a read after an unawaited append sees it', async () => {
    const store = await createSqliteTaskStore({ path: nextPath() });
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    const fencingToken = lease?.fencingToken ?? -1;
    const appended = store.appendJournal(task.id, [{ type: 'clock', data: { clock: 1 } }], { fencingToken });
    const read = store.readJournal(task.id);
    // The lease is given up after the append was called, so the append still carries a valid token.
    const done = store.updateTask(task.id, { status: 'succeeded' }, { fencingToken });
    expect((await read).map((e) => e.type)).toEqual(['task_input', 'clock']);
    expect((await appended)[0]?.seq).toBe(2);
    expect((await done).status).toBe('succeeded');
    await store.close();
  });

  it('rejects an append aborted before its batch is flushed, writing nothing', async () => {
    const store = await createSqliteTaskStore({ path: nextPath() });
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    const controller = new AbortController();
    const aborted = store.appendJournal(task.id, [{ type: 'clock', data: { clock: 1 } }], {
      fencingToken: lease?.fencingToken ?? -1,
      signal: controller.signal,
    });
    controller.abort();
    const error = await aborted.catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect((await store.readJournal(task.id)).map((e) => e.type)).toEqual(['task_input']);
    await store.close();
  });

  it('rejects every append of a batch with a retryable STORE_ERROR when the lock is held elsewhere', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path, busyTimeoutMs: 20 });
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w', { leaseMs: 1000 });
    const fencingToken = lease?.fencingToken ?? -1;
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    let results: PromiseSettledResult<unknown>[];
    try {
      results = await Promise.allSettled(
        [1, 2, 3].map((clock) =>
          store.appendJournal(task.id, [{ type: 'clock', data: { clock } }], { fencingToken }),
        ),
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toMatchObject({
        code: 'STORE_ERROR',
        retryable: true,
        details: { sqliteCode: 'SQLITE_BUSY' },
      });
    }
    const retried = await store.appendJournal(task.id, [{ type: 'clock', data: { clock: 4 } }], {
      fencingToken,
    });
    expect(retried[0]?.seq).toBe(2);
    await store.close();
  });

  it('never hands one task to two connections', async () => {
    const path = nextPath();
    const a = await createSqliteTaskStore({ path });
    const b = await createSqliteTaskStore({ path });
    for (let i = 0; i < 20; i++) await a.createTask(codeInput(), { now: 1000 + i });
    const got = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).claimTask(`w${i % 2}`, { leaseMs: 60_000 })),
    );
    const ids = got.flatMap((lease) => (lease === null ? [] : [lease.taskId]));
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    await a.close();
    await b.close();
  });

  it('never hands one task to two processes', async () => {
    const path = nextPath();
    const store = await createSqliteTaskStore({ path });
    for (let i = 0; i < 50; i++) await store.createTask(codeInput(), { now: 1000 + i });
    await store.close();
    const workers = ['p1', 'p2'].map((owner) => startWorker(path, owner));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.go();
    const claimed = await Promise.all(workers.map((w) => w.done));
    // Both really took part (the worker pauses between claims), so this is a race, not a queue.
    for (const ids of claimed) expect(ids.length).toBeGreaterThan(0);
    const all = claimed.flat();
    expect(all).toHaveLength(50);
    expect(new Set(all).size).toBe(50);
  }, 60_000);
});
