import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../src/client/sse-reader.ts';
import { openForTampering } from '../store/tamper.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';

// One corrupt task stays one corrupt task: whatever was edited behind the store's back (a journal entry, its
// checksum, the approval request itself, a JSON column of the task's row), every list, inbox and stream of its
// tenant skips it and flags it (`corrupt: [{ task_id, code, ... }]`), its own view says it is corrupt, and the
// other tasks of the tenant (and of other tenants) are listed, waited on and decided as before. Real SQLite file,
// real HTTP server on loopback.

interface CorruptItem {
  task_id: string;
  tenant: string;
  status: string;
  code: string;
  message: string;
}
interface View {
  task_id: string;
  status: string;
  tenant: string;
  pending_approvals: { id: string }[];
  corrupt: { code: string; message: string } | null;
}

/** Each way the file can be damaged: one SQL edit of a paused task's rows. */
const DAMAGE: Readonly<Record<string, string>> = {
  'a journal entry edited': `UPDATE journal SET data = '{"x":1,' || substr(data, 2) WHERE task_id = ? AND seq = 1`,
  'a checksum edited': `UPDATE journal SET checksum = printf('%064d', seq)
                        WHERE task_id = ? AND type = 'approval_request'`,
  'the approval request edited': `UPDATE journal SET data = replace(data, '200', '900')
                                  WHERE task_id = ? AND type = 'approval_request'`,
  'an entry removed from the middle': `DELETE FROM journal WHERE task_id = ? AND seq = 2`,
  'the task input garbled': `UPDATE tasks SET input = substr(input, 1, length(input) - 3) WHERE id = ?`,
  'the task input not a task input': `UPDATE tasks SET input = '"just a string"' WHERE id = ?`,
  'the error column garbled': `UPDATE tasks SET error = '{"code":' WHERE id = ?`,
  'the execution log garbled': `UPDATE tasks SET execution_log = '[{"level":' WHERE id = ?`,
  'the resources column garbled': `UPDATE tasks SET resources = 'nope' WHERE id = ?`,
};

/** The damages that break the journal's chain (the others garble the task's row). */
const OF_JOURNAL = new Set([
  'a journal entry edited',
  'a checksum edited',
  'the approval request edited',
  'an entry removed from the middle',
]);

describe('a corrupt task in a tenant', () => {
  const fx = useApiFixture('http-corrupt', { tools: [payTool()] });
  let base = '';
  let a: ApiKey;
  let b: ApiKey;
  let admin: ApiKey;
  /** Tasks of tenant-a and tenant-b that wait for approval and are never damaged. */
  let healthyA = '';
  let healthyB = '';
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    a = await fx.key('tenant-a');
    b = await fx.key('tenant-b');
    admin = await fx.key('ops', 'admin');
    healthyA = await pausedTask(a);
    healthyB = await pausedTask(b);
  });
  const controllers: AbortController[] = [];
  afterAll(() => controllers.forEach((c) => c.abort()));

  async function api<T>(
    key: ApiKey,
    url: string,
    init: RequestInit = {},
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${base}${url}`, {
      ...init,
      headers: { ...key.headers, 'content-type': 'application/json' },
    });
    return { status: res.status, body: (await res.json()) as T };
  }
  async function until(ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  /** A task of the key's tenant paused for the approval of `pay({ amount: 200 })`. */
  async function pausedTask(key: ApiKey): Promise<string> {
    const created = await api<{ task_id: string }>(key, '/api/v1/tasks', {
      method: 'POST',
      body: JSON.stringify({ code: 'console.log("hi"); return await tools.pay({ amount: 200 });' }),
    });
    expect(created.status).toBe(201);
    const id = created.body.task_id;
    await until(async () => (await fx.runtime.get(id))?.status === 'paused', `${id} paused`);
    return id;
  }
  function damage(kind: string, taskId: string): void {
    const raw = openForTampering(fx.path);
    try {
      expect(raw.prepare(DAMAGE[kind] ?? kind).run(taskId).changes, kind).toBeGreaterThan(0);
    } finally {
      raw.close();
    }
  }
  /** A change of the task by another process: its row's time moves on. */
  function touch(taskId: string): void {
    const raw = openForTampering(fx.path);
    try {
      raw.prepare('UPDATE tasks SET updated_at = updated_at + 1 WHERE id = ?').run(taskId);
    } finally {
      raw.close();
    }
  }
  /** Opens the tenant stream and collects its `task` and `corrupt` events; resolves once `ready` came. */
  async function listen(key: ApiKey): Promise<{ tasks: View[]; corrupt: CorruptItem[] }> {
    const abort = new AbortController();
    controllers.push(abort);
    const res = await fetch(`${base}/api/v1/task-events`, { headers: key.headers, signal: abort.signal });
    expect(res.status).toBe(200);
    const out = { tasks: [] as View[], corrupt: [] as CorruptItem[] };
    const messages = readSse(res.body!, { signal: abort.signal });
    expect((await messages.next()).value).toMatchObject({ event: 'ready' });
    void (async () => {
      for await (const m of messages) {
        if (m.event === 'task') out.tasks.push(JSON.parse(m.data) as View);
        if (m.event === 'corrupt') out.corrupt.push(JSON.parse(m.data) as CorruptItem);
      }
    })().catch(() => undefined);
    return out;
  }

  it.each(Object.keys(DAMAGE))(
    'with %s: flagged everywhere, the rest of the tenant unaffected',
    async (kind) => {
      const bad = await pausedTask(a);
      damage(kind, bad);

      // Its own view answers, marked corrupt with the store's code for a failed check.
      const view = await api<View>(a, `/api/v1/tasks/${bad}`);
      expect(view.status, JSON.stringify(view.body)).toBe(200);
      expect(view.body).toMatchObject({ task_id: bad, tenant: 'tenant-a', status: 'paused' });
      expect(view.body.corrupt).toMatchObject({ code: 'CHECKPOINT_CORRUPT' });
      expect(view.body.corrupt?.message).toContain(bad);
      // Another tenant still cannot see that it exists.
      expect((await api(b, `/api/v1/tasks/${bad}`)).status).toBe(404);

      // The approvals inbox lists the tenant's other approvals and flags the corrupt task.
      const inbox = await api<{ approvals: { task_id: string }[]; corrupt: CorruptItem[] }>(
        a,
        '/api/v1/approvals',
      );
      expect(inbox.status, JSON.stringify(inbox.body)).toBe(200);
      expect(inbox.body.approvals.map((x) => x.task_id)).toContain(healthyA);
      expect(inbox.body.approvals.map((x) => x.task_id)).not.toContain(bad);
      expect(inbox.body.corrupt).toContainEqual(
        expect.objectContaining({
          task_id: bad,
          tenant: 'tenant-a',
          status: 'paused',
          code: 'CHECKPOINT_CORRUPT',
        }),
      );
      // Another tenant's inbox neither fails nor names it; an admin's flags it.
      const other = await api<{ approvals: { task_id: string }[]; corrupt: CorruptItem[] }>(
        b,
        '/api/v1/approvals',
      );
      expect(other.status).toBe(200);
      expect(other.body.approvals.map((x) => x.task_id)).toEqual([healthyB]);
      expect(other.body.corrupt).toEqual([]);
      const all = await api<{ corrupt: CorruptItem[] }>(admin, '/api/v1/approvals');
      expect(all.body.corrupt.map((c) => c.task_id)).toContain(bad);

      // The task list (every status, and paused only) skips and flags it.
      for (const query of ['', '?status=paused', '?order=newest&limit=5']) {
        const list = await api<{ tasks: View[]; corrupt: CorruptItem[] }>(a, `/api/v1/tasks${query}`);
        expect(list.status, `${query} ${JSON.stringify(list.body)}`).toBe(200);
        expect(list.body.tasks.map((t) => t.task_id)).not.toContain(bad);
        expect(list.body.corrupt.map((c) => c.task_id)).toContain(bad);
      }
      const listed = await api<{ tasks: View[]; corrupt: CorruptItem[] }>(a, '/api/v1/tasks?status=paused');
      expect(listed.body.tasks.map((t) => t.task_id)).toContain(healthyA);
      const listedB = await api<{ tasks: View[]; corrupt: CorruptItem[] }>(b, '/api/v1/tasks');
      expect(listedB.body.corrupt).toEqual([]);

      // The tenant stream opens, tells a change of it (another process's, seen by re-listing) as `corrupt`, and
      // goes on telling the others' changes.
      const seen = await listen(a);
      touch(bad);
      await until(() => seen.corrupt.some((c) => c.task_id === bad), 'the corrupt event');
      expect(seen.corrupt.find((c) => c.task_id === bad)).toMatchObject({ code: 'CHECKPOINT_CORRUPT' });
      expect(seen.tasks.some((t) => t.task_id === bad)).toBe(false);
      const next = await pausedTask(a);
      await until(
        () => seen.tasks.some((t) => t.task_id === next && t.status === 'paused'),
        'a healthy change',
      );

      // Its events page answers with what precedes the break and says where it is.
      const events = await api<{
        events: { source: string; seq: number }[];
        corrupt?: { code: string; seq: number };
      }>(a, `/api/v1/tasks/${bad}/events`);
      expect(events.status, JSON.stringify(events.body)).toBe(200);
      if (OF_JOURNAL.has(kind)) {
        expect(events.body.corrupt).toMatchObject({ code: 'CHECKPOINT_CORRUPT' });
        const broken = events.body.corrupt?.seq ?? 0;
        const journalSeqs = events.body.events.filter((e) => e.source === 'journal').map((e) => e.seq);
        expect(journalSeqs.every((seq) => seq < broken)).toBe(true);
      } else expect(events.body.corrupt).toBeUndefined();

      // The rest of the tenant is decided and runs on.
      const decided = await api<View>(a, `/api/v1/tasks/${next}/approvals`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      await until(
        async () => (await fx.runtime.get(next))?.status === 'succeeded',
        'the healthy task ran on',
      );
    },
  );

  it('with the result of a finished task garbled: its view is marked corrupt, the list flags it', async () => {
    const submit = async (): Promise<string> => {
      const res = await api<{ task_id: string }>(a, '/api/v1/tasks', {
        method: 'POST',
        body: JSON.stringify({ code: 'return { n: 5 };' }),
      });
      const id = res.body.task_id;
      await until(async () => (await fx.runtime.get(id))?.status === 'succeeded', `${id} succeeded`);
      return id;
    };
    const good = await submit();
    const bad = await submit();
    for (const result of ['{"unterminated', '{"$cc":"no such tag"}']) {
      const raw = openForTampering(fx.path);
      raw.prepare('UPDATE tasks SET result = ? WHERE id = ?').run(result, bad);
      raw.close();
      const view = await api<View & { code: string | null; result: unknown }>(a, `/api/v1/tasks/${bad}`);
      expect(view.status, JSON.stringify(view.body)).toBe(200);
      expect(view.body).toMatchObject({
        status: 'succeeded',
        code: 'return { n: 5 };',
        result: { output: null },
      });
      expect(view.body.corrupt?.message).toContain('result');
      const list = await api<{ tasks: View[]; corrupt: CorruptItem[] }>(a, '/api/v1/tasks?status=succeeded');
      expect(list.status).toBe(200);
      expect(list.body.tasks.map((t) => t.task_id)).toContain(good);
      expect(list.body.tasks.map((t) => t.task_id)).not.toContain(bad);
      expect(list.body.corrupt.map((c) => c.task_id)).toContain(bad);
    }
  });
});
