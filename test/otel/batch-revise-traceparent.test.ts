import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import type { TaskView } from '../../src/api/index.ts';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { until } from '../durable/fixture.ts';
import { useApiFixture } from '../http/api-fixture.ts';
import type { ApiKey } from '../http/api-fixture.ts';
import { OtlpReceiver, startTestTelemetry } from './otlp-receiver.ts';
import type { ReceivedSpan } from './otlp-receiver.ts';

// Batches and revisions read the caller's traceparent as a single submission does (ADR 0053): every task of a
// batch, and a revision, runs as a child of the caller's span, and its tools' ctx carries the trace. A real server
// on loopback, real SQLite, the quickjs sandbox, the SDK exporting to an in-process OTLP receiver.
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER = 'b7ad6b7169203331';
const traceparent = `00-${TRACE}-${CALLER}-01`;

const seen: string[] = [];
const tools = [
  defineTool({
    name: 'traced',
    description: 'returns the traceparent it was given',
    effect: 'read',
    execute: (_a, ctx) => {
      seen.push(ctx.traceContext?.traceparent ?? '');
      return ctx.traceContext?.traceparent ?? null;
    },
  }),
];

describe('traceparent on batches and revisions', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null = null;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    telemetry = startTestTelemetry(receiver, 'codecall-batch-test', 'parentbased_always_on');
  });
  const fx = useApiFixture('otel-batch-revise', { tools });
  let key: ApiKey;
  let url: string;
  beforeAll(async () => {
    key = await fx.key('tenant-a');
    url = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await receiver?.close();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...key.headers, ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const ended = async (id: string): Promise<TaskView> => {
    let view: TaskView | null = null;
    await until(async () => {
      view = await fx.runtime.get(id);
      return view !== null && ['succeeded', 'failed', 'cancelled'].includes(view.status);
    });
    return view as unknown as TaskView;
  };
  const runOf = async (id: string): Promise<ReceivedSpan> => {
    await telemetry?.forceFlush();
    await receiver.waitFor(() => receiver.runsOf(id).length > 0);
    return receiver.runsOf(id)[0] as ReceivedSpan;
  };

  it("each task of a batch runs under the caller's span; a malformed traceparent is INVALID_ARGUMENT", async () => {
    const bad = await post('/api/v1/tasks/batch', { tasks: [{ code: 'return 1' }] }, { traceparent: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const made = await post(
      '/api/v1/tasks/batch',
      { tasks: [{ code: 'return await tools.traced({})' }, { code: 'return await tools.traced({})' }] },
      { traceparent, tracestate: 'vendor=b' },
    );
    expect(made.status).toBe(201);
    const ids = made.body.task_ids as string[];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      expect((await ended(id)).status).toBe('succeeded');
      const run = await runOf(id);
      expect(run.traceId).toBe(TRACE);
      expect(run.parentSpanId).toBe(CALLER);
      await receiver.waitFor(() => receiver.below(run).some((s) => s.name === 'execute_tool tools.traced'));
      const tool = receiver.below(run).find((s) => s.name === 'execute_tool tools.traced');
      expect(seen).toContain(`00-${TRACE}-${tool?.spanId}-01`);
    }
    // Without the header a batch's tasks start traces of their own.
    const plain = await post('/api/v1/tasks/batch', { tasks: [{ code: 'return 2' }] });
    const id = (plain.body.task_ids as string[])[0] ?? '';
    await ended(id);
    const run = await runOf(id);
    expect(run.traceId).not.toBe(TRACE);
    expect(run.parentSpanId).toBe('');
  });

  it("a revision runs under the reviser's span, not the revised task's", async () => {
    const first = await post(
      '/api/v1/tasks',
      { code: 'await tools.traced({}); return missing + 1' },
      { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` },
    );
    const source = String(first.body.task_id);
    expect((await ended(source)).status).toBe('failed');
    const reviser = `00-${TRACE}-${'3'.repeat(16)}-01`;
    const bad = await post(`/api/v1/tasks/${source}/revise`, { code: 'return 1' }, { traceparent: '00-xyz' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const revised = await post(
      `/api/v1/tasks/${source}/revise`,
      { code: 'await tools.traced({}); return await tools.traced({ again: true })', rerun_reads: true },
      { traceparent: reviser },
    );
    expect(revised.status).toBe(201);
    const id = String(revised.body.task_id);
    expect((await ended(id)).status).toBe('succeeded');
    const run = await runOf(id);
    expect(run.traceId).toBe(TRACE);
    expect(run.parentSpanId).toBe('3'.repeat(16));
    const view = await fx.runtime.get(id);
    const output = (view?.result as { output?: unknown } | undefined)?.output;
    expect(output).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  });
});
