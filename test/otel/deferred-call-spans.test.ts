import { createHook } from 'node:async_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore, ToolContext } from '../../src/internal.ts';
import { ensureContextManager } from '../../src/service/telemetry-provider.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { markPrimable, primableIdGenerator } from '../../src/telemetry/index.ts';
import { withSpanId } from '../../src/telemetry/span-ids.ts';

// A tool call's span is made after its outcome went to the guest, with the span id drawn when the call arrived
// (ADR 0053, amended 2026-12-07): what the tool was given as its trace context must be the exported span's, with
// codecall's provider (ids primed) and with any other (the span made at once).
describe("a tool call's span, made after the call", () => {
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  let runner: TaskRunner;
  const seen: { traceparent: string; startedAt: number; endedAt: number }[] = [];

  beforeAll(async () => {
    ensureContextManager();
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-otel-deferred-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const note = (ctx: ToolContext, startedAt: number) =>
      seen.push({ traceparent: ctx.traceContext?.traceparent ?? '', startedAt, endedAt: Date.now() });
    const tools = new ToolRegistry([
      defineTool({
        name: 'quick',
        description: 'answers at once',
        effect: 'read',
        execute: (a, ctx) => (note(ctx, Date.now()), a),
      }),
      defineTool({
        name: 'slow',
        description: 'answers after 300 ms',
        effect: 'read',
        execute: async (a, ctx) => {
          const at = Date.now();
          await new Promise((r) => setTimeout(r, 300));
          note(ctx, at);
          return a;
        },
      }),
    ]);
    runner = new TaskRunner({ store, driver, tools, owner: 'otel' });
  });
  afterAll(async () => {
    trace.disable();
    await store?.close();
    await driver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = async (code: string) => {
    const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const done = await runner.runTask(task.id);
    expect(done?.status).toBe('succeeded');
  };
  const withProvider = async (primable: boolean, body: () => Promise<void>): Promise<ReadableSpan[]> => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      ...(primable ? { idGenerator: primableIdGenerator } : {}),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    if (primable) markPrimable(provider);
    trace.setGlobalTracerProvider(provider);
    try {
      await body();
      await provider.forceFlush();
      return exporter.getFinishedSpans();
    } finally {
      trace.disable();
      await provider.shutdown();
    }
  };
  const millis = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;

  for (const primable of [true, false]) {
    it(`ctx.traceContext names the exported span (${primable ? "codecall's provider" : 'another provider'})`, async () => {
      seen.length = 0;
      const spans = await withProvider(primable, () =>
        run('for (let i = 0; i < 5; i++) await tools.quick({ i }); return 1;'),
      );
      const calls = spans.filter((s) => s.name === 'execute_tool tools.quick');
      expect(calls).toHaveLength(5);
      const sandbox = spans.find((s) => s.name === 'codecall.sandbox.execute');
      expect(new Set(seen.map((s) => s.traceparent))).toEqual(
        new Set(calls.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`)),
      );
      for (const [i, s] of calls.entries()) {
        expect(s.parentSpanContext?.spanId).toBe(sandbox?.spanContext().spanId);
        expect(s.attributes['codecall.tool.effect']).toBe('read');
        // Timed from the call's arrival to its outcome, not from when the span was made.
        const tool = seen[i];
        expect(millis(s.startTime)).toBeLessThanOrEqual((tool?.startedAt ?? 0) + 1);
        expect(millis(s.endTime)).toBeGreaterThanOrEqual((tool?.endedAt ?? Infinity) - 1);
      }
    });
  }

  it('a slow call beside a settled one does not keep the event loop turning while it runs', async () => {
    let immediates = 0;
    const hook = createHook({
      init: (_id, type) => {
        if (type === 'Immediate') immediates++;
      },
    });
    const spans = await withProvider(true, async () => {
      hook.enable();
      try {
        await run('return await Promise.all([tools.quick({ a: 1 }), tools.slow({ b: 2 })]);');
      } finally {
        hook.disable();
      }
    });
    expect(spans.filter((s) => s.name.startsWith('execute_tool'))).toHaveLength(2);
    // The run's own (journal commits, drains) are a few dozen; a span waiting for the slow call without a bound
    // would add one per event-loop turn for 300 ms (thousands).
    expect(immediates).toBeLessThan(200);
  });

  it('a primed span id goes to exactly one span, and ids are never all zero', () => {
    const gen = primableIdGenerator;
    expect(withSpanId('00000000000000ab', () => [gen.generateSpanId(), gen.generateSpanId()])).toEqual([
      '00000000000000ab',
      expect.stringMatching(/^[0-9a-f]{16}$/),
    ]);
    expect(gen.generateSpanId()).not.toBe('00000000000000ab');
    expect(gen.generateTraceId()).toMatch(/^[0-9a-f]{32}$/);
    const random = Math.random;
    Math.random = () => 0;
    try {
      expect(gen.generateSpanId()).toBe('0000000000000001');
    } finally {
      Math.random = random;
    }
  });
});
