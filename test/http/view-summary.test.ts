import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import type { JournalEntry } from '../../src/internal.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';

// Issue 17, item 3 (ADR 0035): a code task's view reads its journal's summary and the few rows it shows, never
// the journal. A task with 40 results of 900 KB (36 MB of journal) paused for an approval is viewed, listed, put
// in the inbox and streamed over a real HTTP server; a spy on the store counts the journal rows each read takes.
// Work done, not time, is asserted (the machine is shared).

const CALLS = 40;
const RESULT_CHARS = 900_000;

interface Read {
  readonly method: 'readJournal' | 'readJournalPage';
  readonly seqs: number[];
  readonly bytes: number;
}

describe('a view of a task with a big journal', () => {
  const fx = useApiFixture('http-view-summary', {
    tools: [
      payTool(),
      defineTool({
        name: 'big',
        description: 'returns 900 KB',
        effect: 'read',
        execute: () => 'x'.repeat(RESULT_CHARS),
      }),
    ],
  });
  let key: ApiKey;
  let address = '';
  let taskId = '';
  let journalSeqs = 0;
  const reads: Read[] = [];
  beforeAll(async () => {
    key = await fx.key('views');
    address = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    const code = `let n = 0; for (let i = 0; i < ${CALLS}; i++) n += (await tools.big({ i })).length;
      return await tools.pay({ amount: 500, n });`;
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code, tool_constraints: { timeout_seconds: 600 } },
    });
    taskId = created.json<{ task_id: string }>().task_id;
    const paused = await fx.runtime.wait(taskId);
    expect(paused.pause_reason).toBe('approval_required');
    journalSeqs = paused.progress.journal_entries;
    // Every journal read from here on, by whichever caller (views, lists, inbox, streams), is recorded.
    const store = fx.store;
    const readJournal = store.readJournal.bind(store);
    const readJournalPage = store.readJournalPage.bind(store);
    const record = (method: Read['method'], entries: readonly JournalEntry[]): void => {
      const bytes = entries.reduce((sum, e) => sum + JSON.stringify(e.data).length, 0);
      reads.push({ method, seqs: entries.map((e) => e.seq), bytes });
    };
    store.readJournal = async (...args) => {
      const entries = await readJournal(...args);
      record('readJournal', entries);
      return entries;
    };
    store.readJournalPage = async (...args) => {
      const page = await readJournalPage(...args);
      record('readJournalPage', page.entries);
      return page;
    };
  }, 300_000);
  afterAll(() => fx.app.close());

  async function get<T>(path: string): Promise<T> {
    const res = await fetch(`${address}${path}`, { headers: key.headers });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  }
  /** The journal rows read since `from`, and their data's size. */
  function readSince(from: number): { seqs: number[]; bytes: number } {
    const since = reads.slice(from);
    return { seqs: since.flatMap((r) => r.seqs), bytes: since.reduce((sum, r) => sum + r.bytes, 0) };
  }

  it('reads the summary and the rows it shows: the first two, the head and the approval request', async () => {
    const from = reads.length;
    const view = await get<{
      status: string;
      checkpoint_id: string;
      pending_approvals: { id: string; tool: string; arguments: unknown }[];
      progress: { tool_calls_completed: number; journal_entries: number };
    }>(`/api/v1/tasks/${taskId}`);
    expect(view.status).toBe('paused');
    expect(view.progress).toMatchObject({ tool_calls_completed: CALLS, journal_entries: journalSeqs });
    expect(view.checkpoint_id).toBe(`${taskId}:${journalSeqs}`);
    expect(view.pending_approvals).toEqual([
      expect.objectContaining({ tool: 'tools.pay', arguments: { amount: 500, n: CALLS * RESULT_CHARS } }),
    ]);
    const read = readSince(from);
    expect(new Set(read.seqs).size).toBe(read.seqs.length);
    expect(read.seqs.length).toBeLessThanOrEqual(4);
    expect(read.seqs).toContain(1);
    expect(read.seqs).toContain(journalSeqs);
    // No 900 KB result among them: a few KB of a 36 MB journal.
    expect(read.bytes).toBeLessThan(64 * 1024);
  });

  it('lists it, puts it in the inbox and starts its stream reading only those rows again', async () => {
    const from = reads.length;
    const list = await get<{ tasks: { task_id: string; pending_approvals: unknown[] }[] }>(
      '/api/v1/tasks?status=paused',
    );
    expect(list.tasks.find((t) => t.task_id === taskId)?.pending_approvals).toHaveLength(1);
    const inbox = await get<{ approvals: { task_id: string }[] }>('/api/v1/approvals');
    expect(inbox.approvals.map((a) => a.task_id)).toContain(taskId);
    // A fresh stream: the view, then a re-read of it (the change feed's first tick) and no journal catch-up.
    const abort = new AbortController();
    const res = await fetch(`${address}/api/v1/tasks/${taskId}/stream`, {
      headers: key.headers,
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    let text = '';
    while (!text.includes('event: view')) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      text += Buffer.from(chunk.value).toString();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    abort.abort();
    expect(text).toContain('event: view');
    const read = readSince(from);
    expect(read.bytes).toBeLessThan(5 * 64 * 1024);
    expect(read.seqs.every((seq) => seq <= 2 || seq >= journalSeqs - 2)).toBe(true);
  });

  it('reads the whole journal where it shows it: the events pages', async () => {
    const from = reads.length;
    await get(`/api/v1/tasks/${taskId}/events?limit=1000`);
    expect(readSince(from).seqs.length).toBeGreaterThan(1);
  });
});

// ADR 0036: the requests a view shows may be big themselves (a Promise.all of approval calls with 200 KB of
// arguments each): the summary keeps them light, so views, lists and the inbox read none of them.
describe('a view of a task waiting on many big approval requests', () => {
  const REQUESTS = 8;
  const NOTE_CHARS = 200_000;
  const fx = useApiFixture('http-view-light', { tools: [payTool()] });
  let key: ApiKey;
  let taskId = '';
  const bigReads: number[] = [];
  beforeAll(async () => {
    key = await fx.key('light');
    const code = `const note = 'n'.repeat(${NOTE_CHARS});
      return await Promise.all(Array.from({ length: ${REQUESTS} }, (_, i) => tools.pay({ amount: 200 + i, note })));`;
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code },
    });
    taskId = created.json<{ task_id: string }>().task_id;
    expect((await fx.runtime.wait(taskId)).pause_reason).toBe('approval_required');
    const store = fx.store;
    const readJournal = store.readJournal.bind(store);
    store.readJournal = async (...args) => {
      const entries = await readJournal(...args);
      for (const e of entries) if (JSON.stringify(e.data).length > 16 * 1024) bigReads.push(e.seq);
      return entries;
    };
  }, 120_000);
  afterAll(() => fx.app.close());

  const get = async <T>(url: string): Promise<T> => {
    const res = await fx.app.inject({ url, headers: key.headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<T>();
  };

  it('shows each request by its digest, decides them, and reads no big row for any of it', async () => {
    const view = await get<{ pending_approvals: { id: string; tool: string; arguments: unknown }[] }>(
      `/api/v1/tasks/${taskId}`,
    );
    expect(view.pending_approvals).toHaveLength(REQUESTS);
    const list = await get<{ tasks: { task_id: string; pending_approvals: unknown }[] }>(
      '/api/v1/tasks?status=paused',
    );
    expect(list.tasks.map((t) => t.task_id)).toContain(taskId);
    const inbox = await get<{ approvals: { approval_id: string; arguments: unknown }[] }>(
      '/api/v1/approvals',
    );
    expect(inbox.approvals).toHaveLength(REQUESTS);
    expect(bigReads).toEqual([]);

    // What is shown is the digest of the journaled arguments (the events route gives them whole).
    const head = (await get<{ progress: { journal_entries: number } }>(`/api/v1/tasks/${taskId}`)).progress;
    const requests: { seq: number }[] = [];
    for (let seq = 1; seq <= head.journal_entries; seq++) {
      const e = await get<{ type: string }>(`/api/v1/tasks/${taskId}/events/${seq}`);
      if (e.type === 'approval_request') requests.push({ seq });
    }
    expect(requests).toHaveLength(REQUESTS);
    for (const r of requests) {
      const whole = await get<{ data: { approval_id: string; args: string } }>(
        `/api/v1/tasks/${taskId}/events/${r.seq}`,
      );
      const digest = {
        truncated: true,
        bytes: Buffer.byteLength(whole.data.args),
        sha256: createHash('sha256').update(whole.data.args).digest('hex'),
      };
      expect(view.pending_approvals.find((a) => a.id === whole.data.approval_id)?.arguments).toEqual(digest);
      expect(inbox.approvals.find((a) => a.approval_id === whole.data.approval_id)?.arguments).toEqual(
        digest,
      );
    }

    const decided = await fx.app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${taskId}/approvals`,
      headers: key.headers,
      payload: { decision: 'approve' },
    });
    expect(decided.statusCode, decided.body).toBe(200);
    const done = await fx.runtime.wait(taskId, { until: 'terminal' });
    expect(done.status).toBe('succeeded');
    expect(done.result?.output).toHaveLength(REQUESTS);
  });
});
