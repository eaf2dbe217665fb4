import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore, ToolContext } from '../../src/internal.ts';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { OtlpReceiver, startTestTelemetry } from './otlp-receiver.ts';
import type { ReceivedSpan } from './otlp-receiver.ts';

// A task's spans as an OTLP receiver gets them: the SDK as the service runs it (BatchSpanProcessor, OTLP/HTTP
// JSON exporter) over the in-process runner, one real SQLite store and the quickjs driver.
describe('the spans of a task', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null;
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  let runner: TaskRunner;
  const seen: (ToolContext['traceContext'] | undefined)[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    telemetry = startTestTelemetry(receiver, 'codecall-test', 'parentbased_always_on');
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-otel-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const tools = new ToolRegistry([
      defineTool({
        name: 'lookup',
        description: 'reads',
        effect: 'read',
        execute: async (a, ctx) => {
          seen.push(ctx.traceContext);
          await new Promise((r) => setTimeout(r, 20));
          return `${(a as { q: string }).q}-ok`;
        },
      }),
      defineTool({
        name: 'transfer',
        description: 'moves money',
        effect: 'unsafe',
        requiresApproval: true,
        execute: (a) => `sent ${(a as { amount: number }).amount}`,
      }),
      defineTool({
        name: 'broken',
        description: 'fails',
        effect: 'read',
        execute: () => {
          throw new Error('down');
        },
      }),
    ]);
    runner = new TaskRunner({ store, driver, tools, owner: 'otel' });
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await store?.close();
    await driver?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const flushed = async () => telemetry?.forceFlush();

  it('a Promise.all of tool calls: run > sandbox execution > one concurrent execute_tool span per call', async () => {
    const code = `
      const all = await Promise.all([tools.lookup({ q: 'a' }), tools.lookup({ q: 'b' }), tools.lookup({ q: 'c' })]);
      try { await tools.broken({}); } catch (e) { all.push(e.code); }
      return all;`;
    const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const done = await runner.runTask(task.id);
    expect(decodeValue(done!.result!)).toEqual(['a-ok', 'b-ok', 'c-ok', 'TOOL_ERROR']);
    await flushed();
    await receiver.waitFor(() => receiver.runsOf(task.id).length === 1);
    const [run] = receiver.runsOf(task.id) as [ReceivedSpan];
    expect(run.service).toBe('codecall-test');
    expect(run.attributes).toMatchObject({
      'codecall.task.status': 'succeeded',
      'codecall.task.kind': 'code',
    });
    await receiver.waitFor(() => receiver.below(run).length >= 5);
    const below = receiver.below(run);
    const sandbox = below.find((s) => s.name === 'codecall.sandbox.execute');
    expect(sandbox?.parentSpanId).toBe(run.spanId);
    expect(sandbox?.attributes).toMatchObject({
      'codecall.sandbox.driver': 'quickjs',
      'codecall.sandbox.tool_calls': 4,
    });
    // No program source by default.
    expect(sandbox?.attributes['codecall.sandbox.code']).toBeUndefined();
    const lookups = below.filter((s) => s.name === 'execute_tool tools.lookup');
    expect(lookups).toHaveLength(3);
    for (const s of lookups) {
      expect(s.parentSpanId).toBe(sandbox?.spanId);
      expect(s.attributes).toMatchObject({
        'gen_ai.tool.name': 'tools.lookup',
        'codecall.tool.effect': 'read',
        'codecall.replayed': false,
      });
      expect(s.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    }
    // The three ran at once: each started before any ended.
    const lastStart = lookups.map((s) => s.start).reduce((a, b) => (a > b ? a : b));
    const firstEnd = lookups.map((s) => s.end).reduce((a, b) => (a < b ? a : b));
    expect(lastStart < firstEnd).toBe(true);
    const broken = below.find((s) => s.name === 'execute_tool tools.broken');
    expect(broken?.status).toBe(2);
    expect(broken?.attributes['codecall.error.code']).toBe('TOOL_ERROR');
    // Each tool saw its own span as its trace context.
    const ids = new Set(lookups.map((s) => `00-${s.traceId}-${s.spanId}-01`));
    expect(seen.slice(-3).every((tc) => tc !== undefined && ids.has(tc.traceparent))).toBe(true);
  });

  it('an approval: the pause leaves the call span with its request event; the resume links to the first run and marks replayed calls', async () => {
    const code = `
      const before = await tools.lookup({ q: 'balance' });
      const sent = await tools.transfer({ to: 'alice', amount: 10 });
      return [before, sent];`;
    const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const paused = await runner.runTask(task.id);
    expect(paused).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
    const done = await runner.decide(task.id, [{ approvalId: 'call-2', decision: 'approve' }], 'ops');
    expect(done?.status).toBe('succeeded');
    await flushed();
    await receiver.waitFor(() => receiver.runsOf(task.id).length === 2);
    const [first, second] = receiver.runsOf(task.id).sort((a, b) => (a.start < b.start ? -1 : 1)) as [
      ReceivedSpan,
      ReceivedSpan,
    ];
    expect(first.attributes).toMatchObject({
      'codecall.task.status': 'paused',
      'codecall.task.pause_reason': 'approval_required',
    });
    expect(second.links).toEqual([{ traceId: first.traceId, spanId: first.spanId }]);
    expect(second.attributes['codecall.task.resumed']).toBe(true);
    await receiver.waitFor(() =>
      receiver.below(second).some((s) => s.name === 'execute_tool tools.transfer'),
    );
    await receiver.waitFor(() => receiver.below(first).some((s) => s.name === 'execute_tool tools.transfer'));
    const asked = receiver.below(first).find((s) => s.name === 'execute_tool tools.transfer');
    expect(asked?.events.map((e) => e.name)).toContain('codecall.approval.requested');
    expect(asked?.attributes['codecall.call.unfinished']).toBe(true);
    const resumed = receiver.below(second);
    const replayed = resumed.find((s) => s.name === 'execute_tool tools.lookup');
    expect(replayed?.attributes['codecall.replayed']).toBe(true);
    // Not re-timed as if it ran again: a zero-length span.
    expect(replayed?.end).toBe(replayed?.start);
    const transfer = resumed.find((s) => s.name === 'execute_tool tools.transfer');
    expect(transfer?.attributes['codecall.replayed']).toBe(false);
    expect(transfer?.events.map((e) => e.name)).toEqual(
      expect.arrayContaining(['codecall.approval.decided', 'codecall.approval.started']),
    );
    expect(transfer?.events.find((e) => e.name === 'codecall.approval.decided')?.attributes).toMatchObject({
      'codecall.approval.decision': 'approve',
      'codecall.approval.actor': 'ops',
    });
  });

  it("a caller's traceparent kept with the task is the run span's parent, and reaches the tool's ctx", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
    const task = await store.createTask({
      kind: 'code',
      code: `return await tools.lookup({ q: 'traced' })`,
      language: 'javascript',
      seed: 1,
      traceContext: { traceparent, tracestate: 'vendor=x' },
    });
    await runner.runTask(task.id);
    await flushed();
    await receiver.waitFor(() => receiver.runsOf(task.id).length === 1);
    const [run] = receiver.runsOf(task.id) as [ReceivedSpan];
    expect(run.traceId).toBe(traceId);
    expect(run.parentSpanId).toBe('00f067aa0ba902b7');
    const tc = seen.at(-1);
    expect(tc?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(tc?.tracestate).toBe('vendor=x');
  });
});
