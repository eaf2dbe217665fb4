import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore, ToolContext } from '../../src/internal.ts';
import { OTEL_DEFAULTS, otelSettings } from '../../src/service/config-otel.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { tracer } from '../../src/telemetry/index.ts';
import { OtlpReceiver } from './otlp-receiver.ts';

// Nothing configured: no provider is registered, the core's spans are the API's no-op ones and nothing is sent.
describe('tracing off', () => {
  let receiver: OtlpReceiver;
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  let runner: TaskRunner;
  const seen: ToolContext[] = [];
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-otel-off-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const tools = new ToolRegistry([
      defineTool({
        name: 'look',
        description: 'reads',
        effect: 'read',
        execute: (_a, ctx) => {
          seen.push(ctx);
          return 'ok';
        },
      }),
    ]);
    runner = new TaskRunner({ store, driver, tools, owner: 'otel-off' });
  });
  afterAll(async () => {
    await store?.close();
    await driver?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('no settings without an endpoint, so no provider: spans do not record and nothing is exported', async () => {
    expect(otelSettings(OTEL_DEFAULTS, {})).toBeNull();
    const span = tracer().startSpan('probe');
    expect(span.isRecording()).toBe(false);
    span.end();
    const task = await store.createTask({
      kind: 'code',
      code: 'return await Promise.all([tools.look({}), tools.look({})])',
      language: 'javascript',
      seed: 1,
    });
    expect((await runner.runTask(task.id))?.status).toBe('succeeded');
    expect(seen).toHaveLength(2);
    expect(seen.every((ctx) => ctx.traceContext === undefined)).toBe(true);
    // The API's own no-op provider, not the SDK's.
    expect(trace.getTracerProvider().constructor.name).toBe('ProxyTracerProvider');
    expect(tracer().startSpan('x').spanContext().traceId).toBe('00000000000000000000000000000000');
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests).toBe(0);
  });

  it("still hands a caller's traceparent to tools as ctx.traceContext (a tool can propagate it)", async () => {
    seen.length = 0;
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const task = await store.createTask({
      kind: 'code',
      code: 'await tools.look({}); return await Promise.all([tools.look({}), tools.look({})])',
      language: 'javascript',
      seed: 1,
      traceContext: { traceparent, tracestate: 'vendor=x' },
    });
    expect((await runner.runTask(task.id))?.status).toBe('succeeded');
    expect(seen).toHaveLength(3);
    // No span of codecall's in between: the tool's parent is the caller's span itself.
    for (const ctx of seen) expect(ctx.traceContext).toEqual({ traceparent, tracestate: 'vendor=x' });
    expect(trace.getTracerProvider().constructor.name).toBe('ProxyTracerProvider');
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests).toBe(0);
  });
});

describe('otelSettings: the config keys over the standard OTEL_* variables', () => {
  it('reads the endpoint, service name and sampler from the environment', () => {
    expect(
      otelSettings(OTEL_DEFAULTS, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_SERVICE_NAME: 'svc',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-token=a%20b,x-other=c',
      }),
    ).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'svc',
      sampler: 'traceidratio',
      ratio: 0.25,
      includeContent: false,
      contentMaxBytes: 1024,
      headers: { 'x-token': 'a b', 'x-other': 'c' },
    });
    // The traces endpoint is taken as it is, and wins over the base one.
    expect(
      otelSettings(OTEL_DEFAULTS, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom',
      })?.url,
    ).toBe('http://b:4318/custom');
  });

  it('the config wins; OTEL_SDK_DISABLED turns the variables off; bad values are INVALID_CONFIG', () => {
    const config = {
      ...OTEL_DEFAULTS,
      otelEndpoint: 'http://mine:4318/v1/traces',
      otelSampler: 'always_on' as const,
    };
    expect(otelSettings(config, { OTEL_TRACES_SAMPLER: 'always_off' })).toMatchObject({
      url: 'http://mine:4318/v1/traces',
      sampler: 'always_on',
      serviceName: 'codecall',
    });
    expect(
      otelSettings(OTEL_DEFAULTS, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a', OTEL_SDK_DISABLED: 'true' }),
    ).toBeNull();
    expect(() =>
      otelSettings(OTEL_DEFAULTS, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a',
        OTEL_TRACES_SAMPLER: 'sometimes',
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() =>
      otelSettings(OTEL_DEFAULTS, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a', OTEL_TRACES_SAMPLER_ARG: '2' }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => otelSettings(OTEL_DEFAULTS, { OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://a' })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });

  it('the protocol: http/protobuf by default, the traces variable over the general one, the key over both', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' };
    expect(otelSettings(OTEL_DEFAULTS, env)?.protocol).toBe('http/protobuf');
    expect(otelSettings(OTEL_DEFAULTS, { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol).toBe(
      'http/json',
    );
    expect(
      otelSettings(OTEL_DEFAULTS, {
        ...env,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      })?.protocol,
    ).toBe('http/protobuf');
    expect(
      otelSettings(
        { ...OTEL_DEFAULTS, otelProtocol: 'http/json' },
        { ...env, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' },
      )?.protocol,
    ).toBe('http/json');
    expect(() => otelSettings(OTEL_DEFAULTS, { ...env, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        details: { source: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' },
      }),
    );
  });
});
