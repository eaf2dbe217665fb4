import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, startCodecall, until } from '../cli-fixture.ts';
import { OtlpReceiver } from './otlp-receiver.ts';
import type { ReceivedSpan } from './otlp-receiver.ts';

// A real `codecall serve` child exporting to an in-process OTLP/HTTP receiver: the caller's traceparent reaches a
// tool's ctx, the JSON log names task, trace and span, and a run resumed after a SIGKILL links to the dead one.
const TOOLS = (marker: string) => `
import { existsSync, writeFileSync } from 'node:fs';
import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'traced',
    description: 'returns its trace context',
    effect: 'read',
    execute: (_a, ctx) => ctx.traceContext ?? null,
  }),
  defineTool({
    name: 'first',
    description: 'quick',
    effect: 'read',
    execute: () => 'one',
  }),
  defineTool({
    name: 'stall',
    description: 'hangs the first time (the server is killed meanwhile), answers after',
    effect: 'read',
    execute: () => {
      if (existsSync(${JSON.stringify(marker)})) return 'two';
      writeFileSync(${JSON.stringify(marker)}, 'x');
      return new Promise(() => undefined);
    },
  }),
];
`;

describe('codecall serve with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let dir: string;
  let receiver: OtlpReceiver;
  const servers: ReturnType<typeof startCodecall>[] = [];
  const file = (name: string) => join(dir, name);

  const serve = async () => {
    const server = startCodecall(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace(/\/v1\/traces$/, ''),
        OTEL_SERVICE_NAME: 'codecall-serve-test',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OPENAI_API_KEY: '',
        OPENAI_BASE_URL: '',
        MISTRAL_API_KEY: '',
      },
      'serve',
      '--port',
      '0',
      '--db',
      file('tasks.db'),
      '--tools',
      file('tools.ts'),
      '--insecure-no-auth',
      '--lease-ms',
      '1000',
      '--log-format',
      'json',
      '--log-level',
      'debug',
    );
    servers.push(server);
    let url = '';
    await until(() => {
      url = /serving on (http:\/\/[^\s"]+)/.exec(server.stderr())?.[1] ?? '';
      return url !== '';
    }, 60_000);
    return { server, url };
  };

  const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const taskOf = async (url: string, id: string) =>
    (await (await fetch(`${url}/api/v1/tasks/${id}`)).json()) as Record<string, unknown>;

  beforeAll(async () => {
    dir = await cliTestDir('otel-serve');
    receiver = await OtlpReceiver.start();
    await writeFile(file('tools.ts'), TOOLS(file('stalled')));
  });
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL');
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a task's traceparent header: the run joins the caller's trace, the tool's ctx carries it, the JSON log names it", async () => {
    const { server, url } = await serve();
    const traceId = '5af7651916cd43dd8448eb211c80319c';
    const traceparent = `00-${traceId}-c7ad6b7169203331-01`;
    const bad = await post(url, { code: 'return 1' }, { traceparent: 'not-a-trace' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const made = await post(url, { code: 'return await tools.traced({})' }, { traceparent });
    expect(made.status).toBe(201);
    const id = String(made.body.task_id);
    let task: Record<string, unknown> = {};
    await until(async () => {
      task = await taskOf(url, id);
      return task.status === 'succeeded';
    }, 60_000);
    const seen = (task.result as { output: { traceparent: string } }).output;
    expect(seen.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    await receiver.waitFor(() => receiver.runsOf(id).length === 1);
    const [run] = receiver.runsOf(id) as [ReceivedSpan];
    expect(run.parentSpanId).toBe('c7ad6b7169203331');
    expect(run.service).toBe('codecall-serve-test');
    // The tool's context is its own span's.
    await receiver.waitFor(() => receiver.below(run).some((s) => s.name === 'execute_tool tools.traced'));
    const tool = receiver.below(run).find((s) => s.name === 'execute_tool tools.traced');
    expect(seen.traceparent).toBe(`00-${traceId}-${tool?.spanId}-01`);
    // The structured log's line of the run's end names the task, its trace and the run's span.
    await until(() => server.stderr().includes(`task ${id}: the run ended`), 30_000);
    const line = server
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => String(l.msg).startsWith(`task ${id}: the run ended`));
    expect(line).toMatchObject({ task_id: id, trace_id: traceId, span_id: run.spanId, level: 20 });
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 120_000);

  it('a run resumed after its server was SIGKILLed links to the dead run, its finished call replayed', async () => {
    const first = await serve();
    const made = await post(first.url, {
      code: 'const a = await tools.first({}); const b = await tools.stall({}); return [a, b];',
    });
    const id = String(made.body.task_id);
    // The first call's span was exported (the batch goes every 50 ms) while the second hangs.
    await receiver.waitFor((spans) =>
      spans.some((s) => s.name === 'execute_tool tools.first' && s.attributes['codecall.replayed'] === false),
    );
    await until(async () => (await import('node:fs')).existsSync(file('stalled')), 30_000);
    const early = receiver.spans.find((s) => s.name === 'execute_tool tools.first');
    first.server.child.kill('SIGKILL');
    await first.server.exited;
    const second = await serve();
    let task: Record<string, unknown> = {};
    await until(async () => {
      task = await taskOf(second.url, id);
      return task.status === 'succeeded';
    }, 90_000);
    expect((task.result as { output: unknown }).output).toEqual(['one', 'two']);
    await receiver.waitFor(() => receiver.runsOf(id).length >= 1);
    const [resumed] = receiver.runsOf(id) as [ReceivedSpan];
    // The dead run never exported its own span (nor its sandbox's, open when it died), but its journaled attempt
    // names it, and its finished call's span is in the same trace: the resumed run links to that span.
    const { events } = (await (await fetch(`${second.url}/api/v1/tasks/${id}/events?limit=1000`)).json()) as {
      events: { type: string; data: { action?: string; trace?: { trace_id: string; span_id: string } } }[];
    };
    const attempts = events
      .filter((e) => e.type === 'control' && e.data.action === 'attempt' && e.data.trace)
      .map((e) => ['', e.data.trace?.trace_id, e.data.trace?.span_id]);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    const [, deadTrace, deadSpan] = attempts[0] ?? [];
    expect(deadTrace).toBe(early?.traceId);
    expect(resumed.links).toContainEqual({ traceId: deadTrace, spanId: deadSpan });
    expect(attempts.at(-1)?.[2]).toBe(resumed.spanId);
    await receiver.waitFor(() => receiver.below(resumed).some((s) => s.name === 'execute_tool tools.stall'));
    const replayed = receiver.below(resumed).find((s) => s.name === 'execute_tool tools.first');
    expect(replayed?.attributes['codecall.replayed']).toBe(true);
    second.server.child.kill('SIGTERM');
    await second.server.exited;
  }, 240_000);
});
