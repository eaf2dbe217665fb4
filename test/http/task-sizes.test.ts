import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../src/client/sse-reader.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { DEFAULT_MAX_CODE_BYTES, DEFAULT_MAX_METADATA_BYTES } from '../../src/durable/limit-ceilings.ts';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// Issue 17: a task's program and metadata are bounded where they enter (413 PAYLOAD_TOO_LARGE naming the field and
// the bound, on every path that creates tasks), and a list or the task-events stream never carries a whole program:
// a field over 4 KiB is summarised (size, sha256, first characters) while GET /tasks/{id} keeps it whole.

const MAX_CODE = 64 * 1024;
const MAX_METADATA = 2048;

describe('task sizes: caps at submit, summaries in lists and task-events', () => {
  const fx = useApiFixture('http-task-sizes', {
    runtime: { ceilings: { maxCodeBytes: MAX_CODE, maxMetadataBytes: MAX_METADATA } },
  });
  let base = '';
  let key: ApiKey;
  const aborts: AbortController[] = [];
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    key = await fx.key('t-sizes');
  });
  afterAll(() => aborts.forEach((a) => a.abort()));

  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...key.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${base}${path}`, { headers: key.headers });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };
  /** A program of exactly `bytes` UTF-8 bytes that returns 1. */
  const program = (bytes: number): string => {
    const head = 'return 1; // ';
    return head + 'x'.repeat(bytes - head.length);
  };

  it.each([
    ['code', { code: program(MAX_CODE + 1) }, MAX_CODE + 1, MAX_CODE],
    ['instruction', { instruction: 'y'.repeat(MAX_CODE + 10) }, MAX_CODE + 10, MAX_CODE],
    ['code', { code: `return 1; // ${'é'.repeat(MAX_CODE / 2)}` }, 13 + MAX_CODE, MAX_CODE],
    [
      'metadata',
      { code: '1', metadata: { blob: 'z'.repeat(MAX_METADATA) } },
      MAX_METADATA + 11,
      MAX_METADATA,
    ],
  ])(
    'refuses %s over its bound with 413 naming the field, its size and the bound',
    async (field, body, bytes, ceiling) => {
      const before = await countTasks(fx.store);
      const res = await post('/api/v1/tasks', body);
      expect(res.status).toBe(413);
      const error = ((await res.json()) as ErrorBody).error;
      expect(error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(error.details).toEqual({ field, bytes, ceiling });
      expect(error.message).toContain(String(ceiling));
      expect(await countTasks(fx.store)).toBe(before);
    },
  );

  it('refuses a batch whose task i is over a bound, naming tasks[i], and stores none of it', async () => {
    const before = await countTasks(fx.store);
    const res = await post('/api/v1/tasks/batch', {
      tasks: [{ code: '1' }, { code: program(MAX_CODE + 1) }],
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorBody).error.details).toEqual({
      field: 'tasks[1].code',
      bytes: MAX_CODE + 1,
      ceiling: MAX_CODE,
    });
    expect(await countTasks(fx.store)).toBe(before);
  });

  it('without a ceiling the runtime still bounds them (1 MiB of program, 64 KiB of metadata)', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [], tools: new ToolRegistry([]) });
    try {
      await expect(runtime.submit({ code: program(DEFAULT_MAX_CODE_BYTES + 1) })).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { field: 'code', ceiling: DEFAULT_MAX_CODE_BYTES },
      });
      await expect(
        runtime.submit({ code: '1', metadata: { m: 'm'.repeat(DEFAULT_MAX_METADATA_BYTES) } }),
      ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { field: 'metadata' } });
    } finally {
      await runtime.close();
    }
  });

  it('lists and task-events summarise a program at the bound; GET /tasks/{id} keeps it whole', async () => {
    const abort = new AbortController();
    aborts.push(abort);
    const res = await fetch(`${base}/api/v1/task-events`, { headers: key.headers, signal: abort.signal });
    const messages = readSse(res.body!, { signal: abort.signal });
    expect((await messages.next()).value).toMatchObject({ event: 'ready' });
    const events: { task_id: string; code: unknown; truncated?: string[]; status: string }[] = [];
    void (async () => {
      for await (const m of messages) if (m.event === 'task') events.push(JSON.parse(m.data) as never);
    })().catch(() => undefined);

    const code = program(MAX_CODE);
    const metadata = { note: 'n'.repeat(MAX_METADATA - 20) };
    const created = await post('/api/v1/tasks', { code, metadata, session_id: 'big' });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { task_id: string }).task_id;
    const small = await post('/api/v1/tasks', { code: 'return 2;', session_id: 'big' });
    const smallId = ((await small.json()) as { task_id: string }).task_id;

    const summary = {
      truncated: true,
      bytes: MAX_CODE,
      sha256: createHash('sha256').update(code).digest('hex'),
      head: code.slice(0, 256),
    };
    const page = await get<{ tasks: Record<string, unknown>[] }>('/api/v1/tasks?session_id=big&limit=100');
    const item = page.tasks.find((t) => t.task_id === id);
    expect(item?.code).toEqual(summary);
    expect(item?.truncated).toEqual(['code']);
    // Metadata under 4 KiB is listed as it is; a small program too, with no `truncated`.
    expect(item?.metadata).toEqual(metadata);
    const smallItem = page.tasks.find((t) => t.task_id === smallId);
    expect(smallItem?.code).toBe('return 2;');
    expect(smallItem).not.toHaveProperty('truncated');

    const whole = await get<{ code: string; metadata: unknown }>(`/api/v1/tasks/${id}`);
    expect(whole.code).toBe(code);
    expect(whole.metadata).toEqual(metadata);

    for (let i = 0; i < 500 && !events.some((e) => e.task_id === id && e.status === 'succeeded'); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const told = events.filter((e) => e.task_id === id);
    expect(told.length).toBeGreaterThan(0);
    for (const e of told) {
      expect(e.code).toEqual(summary);
      expect(e.truncated).toEqual(['code']);
    }
    abort.abort();
  });
});
