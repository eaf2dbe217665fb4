import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../src/client/sse-reader.ts';
import type { SseMessage } from '../../src/client/sse-reader.ts';
import type { ChangeFeedStats } from '../../src/http/change-feed.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { codecall } from '../cli-fixture.ts';
import { until } from '../durable/fixture.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';

// One change feed per server: however many streams are open, the store is asked once per tick which tasks
// changed; a change written by another process (a second connection, `codecall tasks cancel --db`) still reaches
// the open streams; with no stream open nothing is asked at all.

const TICK_MS = 40;

interface Listened {
  readonly messages: { event: string; data: string }[];
  readonly abort: AbortController;
}

describe('the change feed', () => {
  const stats: ChangeFeedStats = { ticks: 0, polls: 0, subscribers: 0 };
  const fx = useApiFixture('http-change-feed', {
    tools: [payTool()],
    streams: { bufferBytes: 1024 * 1024, maxPerKey: 200, maxPerTenant: 200 },
    feed: { tickMs: TICK_MS, stats },
  });
  let base = '';
  let key: ApiKey;
  const open: AbortController[] = [];
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    key = await fx.key('acme');
  });
  afterAll(() => open.forEach((c) => c.abort()));

  async function listen(path: string): Promise<Listened> {
    const abort = new AbortController();
    open.push(abort);
    const res = await fetch(`${base}${path}`, { headers: key.headers, signal: abort.signal });
    expect(res.status).toBe(200);
    const out: Listened = { messages: [], abort };
    const messages = readSse(res.body!, { signal: abort.signal });
    // The first event (`view` or `ready`) says the stream listens.
    const first: IteratorResult<SseMessage> = await messages.next();
    if (!first.done) out.messages.push(first.value);
    void (async () => {
      for await (const m of messages) out.messages.push(m);
    })().catch(() => undefined);
    return out;
  }

  /** A task paused for approval: it stays unfinished (its streams open) until the test ends it. */
  async function pausedTask(): Promise<string> {
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...key.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'return await tools.pay({ amount: 800 });' }),
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { task_id: string }).task_id;
    await until(async () => (await fx.runtime.get(id))?.status === 'paused', 60_000);
    return id;
  }

  /** Polls and ticks over the next `ticks` ticks (waited for by polling, however slow the machine). */
  async function window(ticks: number): Promise<{ polls: number; ticks: number }> {
    const from = { polls: stats.polls, ticks: stats.ticks };
    await until(() => stats.ticks >= from.ticks + ticks, 60_000);
    return { polls: stats.polls - from.polls, ticks: stats.ticks - from.ticks };
  }

  const abortAll = async (streams: readonly Listened[]): Promise<void> => {
    for (const s of streams) s.abort.abort();
    await until(() => stats.subscribers === 0, 30_000);
  };

  it('asks the store nothing while no stream is open', async () => {
    await pausedTask();
    expect(stats.subscribers).toBe(0);
    const before = stats.polls;
    // Long enough for many ticks, had the feed been running.
    await new Promise((r) => setTimeout(r, TICK_MS * 15));
    expect(stats.polls).toBe(before);
  });

  it('asks the store once per tick with 1 stream open and with 50', async () => {
    const ids = [await pausedTask(), await pausedTask()];
    const one = [await listen(`/api/v1/tasks/${ids[0]}/stream`)];
    const alone = await window(5);
    expect(alone.polls).toBe(alone.ticks);
    const many = [...one];
    for (let i = 0; i < 49; i++) {
      many.push(
        await listen(i % 2 === 0 ? `/api/v1/tasks/${ids[i % ids.length]}/stream` : '/api/v1/task-events'),
      );
    }
    expect(stats.subscribers).toBe(50);
    const crowd = await window(5);
    expect(crowd.polls).toBe(crowd.ticks);
    await abortAll(many);
    // The last stream gone, the feed stops.
    const after = stats.polls;
    await new Promise((r) => setTimeout(r, TICK_MS * 15));
    expect(stats.polls).toBe(after);
  });

  it('tells open streams of a change written by another connection to the database', async () => {
    const id = await pausedTask();
    const stream = await listen(`/api/v1/tasks/${id}/stream`);
    const events = await listen('/api/v1/task-events');
    const other = await createSqliteTaskStore({ path: fx.path });
    try {
      const task = await other.getTask(id);
      await other.updateTask(id, { status: 'cancelled' }, { expectedVersion: task?.version ?? -1 });
    } finally {
      await other.close();
    }
    const cancelled = (m: { event: string; data: string }): boolean =>
      m.data.includes(id) && m.data.includes('"status":"cancelled"');
    await until(() => stream.messages.some((m) => m.event === 'status' && cancelled(m)), 30_000);
    await until(() => events.messages.some((m) => m.event === 'task' && cancelled(m)), 30_000);
    await abortAll([stream, events]);
  });

  it('tells an open stream of `codecall tasks cancel --db` run as another process', async () => {
    const id = await pausedTask();
    const events = await listen('/api/v1/task-events');
    const run = await codecall({}, 'tasks', 'cancel', id, '--db', fx.path);
    expect(run.code, run.stderr).toBe(0);
    await until(
      () =>
        events.messages.some(
          (m) => m.event === 'task' && m.data.includes(id) && m.data.includes('"status":"cancelled"'),
        ),
      30_000,
    );
    await abortAll([events]);
  });
});
