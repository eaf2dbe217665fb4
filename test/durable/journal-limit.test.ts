import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { until, useDurableFixture } from './fixture.ts';

// Issue 17, item 3: a task's whole journal is bounded (ADR 0029). The append that would take it over the bound
// writes nothing and the task fails with JOURNAL_LIMIT (bytes used and the limit in the message); what was
// journaled before stays whole, and the store's running totals are exact.

const MAX_BYTES = 200_000;
// Each call journals a result of ~10 KB: the bound is reached around call 20, well before the program's 200 calls.
const PROGRAM = `
let n = 0;
for (let i = 0; i < 200; i++) { await tools.blob({ i }); n++; }
return n;`;

function blobTool(ran: number[], onCall?: (i: number) => void) {
  return defineTool({
    name: 'blob',
    description: 'returns ~10 KB',
    effect: 'read',
    execute: (a) => {
      const { i } = a as { i: number };
      ran.push(i);
      onCall?.(i);
      return 'b'.repeat(10_000);
    },
  });
}

/** The store's running totals and what the journal table actually holds, read from the file itself. */
function totals(path: string, taskId: string) {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT journal_bytes AS kept, journal_entries AS keptEntries,
           (SELECT sum(octet_length(data)) FROM journal WHERE task_id = tasks.id) AS bytes,
           (SELECT count(*) FROM journal WHERE task_id = tasks.id) AS entries
         FROM tasks WHERE id = ?`,
      )
      .get(taskId) as { kept: number; keptEntries: number; bytes: number; entries: number };
  } finally {
    db.close();
  }
}

async function settled(runtime: Runtime, taskId: string) {
  return runtime.wait(taskId, { until: 'terminal' });
}

describe('a task journal is bounded', () => {
  const fx = useDurableFixture('journal-limit');

  it('fails the task with JOURNAL_LIMIT when an append would take its journal over maxBytes', async () => {
    const ran: number[] = [];
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([blobTool(ran)]),
      journalLimits: { maxBytes: MAX_BYTES },
    });
    const t = await runtime.submit({ code: PROGRAM });
    const view = await runtime.run(t.task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('JOURNAL_LIMIT');
    expect(view.error?.message).toMatch(/holds \d+ bytes/);
    expect(view.error?.message).toContain(`limit of ${MAX_BYTES}`);
    // Nothing journaled is lost: the chain reads back verified, within the bound, and the totals are exact.
    const journal = await fx.store.readJournal(t.task_id);
    const sums = totals(fx.path, t.task_id);
    expect(sums.kept).toBe(sums.bytes);
    expect(sums.keptEntries).toBe(journal.length);
    expect(sums.bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(sums.bytes).toBeGreaterThan(MAX_BYTES / 2);
    const outcomes = journal.filter((e) => e.type === 'tool_outcome').length;
    expect(outcomes).toBeGreaterThan(5);
    expect(outcomes).toBeLessThan(200);
    await runtime.close();
  });

  it('bounds the number of entries too', async () => {
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([blobTool([])]),
      journalLimits: { maxEntries: 30 },
    });
    const t = await runtime.submit({ code: PROGRAM });
    const view = await runtime.run(t.task_id);
    expect(view.error?.code).toBe('JOURNAL_LIMIT');
    expect(view.error?.message).toContain('limit of 30');
    expect((await fx.store.readJournal(t.task_id)).length).toBeLessThanOrEqual(30);
    await runtime.close();
  });

  it('a task resumed by replay reaches the bound with every call run once, on a store opened again', async () => {
    const ran: number[] = [];
    let runtime: Runtime | undefined;
    let taskId = '';
    const pauseAt = (i: number): void => {
      if (i === 4) void runtime?.pause(taskId);
    };
    runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([blobTool(ran, pauseAt)]),
      journalLimits: { maxBytes: MAX_BYTES },
    });
    taskId = (await runtime.submit({ code: PROGRAM })).task_id;
    const paused = await runtime.run(taskId);
    expect(paused.status).toBe('paused');
    await runtime.close();
    const before = await fx.store.readJournal(taskId);

    // The totals live in the file: a store opened again goes on counting from them.
    const store = await createSqliteTaskStore({ path: fx.path });
    runtime = createRuntime({
      store,
      drivers: [fx.driver],
      tools: new ToolRegistry([blobTool(ran, pauseAt)]),
      journalLimits: { maxBytes: MAX_BYTES },
    });
    await runtime.resume(taskId);
    runtime.start();
    await until(async () => (await store.getTask(taskId))?.status === 'failed', 60_000);
    const view = await settled(runtime, taskId);
    expect(view.error?.code).toBe('JOURNAL_LIMIT');
    const journal = await store.readJournal(taskId);
    // The replay journaled nothing again: what the first run wrote is the journal's head, unchanged.
    expect(journal.slice(0, before.length).map((e) => e.checksum)).toEqual(before.map((e) => e.checksum));
    // Every call the journal holds ran exactly once (replayed calls were not run again); the last one ran but its
    // intent and outcome, one append (a read, ADR 0047 amended 2026-12-07), were what the bound refused, and the
    // task ended there (it is never replayed).
    const intents = journal.filter((e) => e.type === 'tool_intent').length;
    const outcomes = journal.filter((e) => e.type === 'tool_outcome').length;
    expect(ran.length).toBe(intents + 1);
    expect(outcomes).toBe(intents);
    expect(new Set(ran).size).toBe(ran.length);
    const sums = totals(fx.path, taskId);
    expect(sums.kept).toBe(sums.bytes);
    expect(sums.bytes).toBeLessThanOrEqual(MAX_BYTES);
    await runtime.close();
    await store.close();
  });
});
