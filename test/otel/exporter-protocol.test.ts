import { afterEach, describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { tracer } from '../../src/telemetry/index.ts';
import { OtlpReceiver, startTestTelemetry } from './otlp-receiver.ts';

// Both OTLP/HTTP encodings reach a receiver on loopback with the same spans: protobuf (the default) and JSON.
describe('the OTLP/HTTP export encodings', () => {
  let receiver: OtlpReceiver | undefined;
  let telemetry: Telemetry | null = null;
  afterEach(async () => {
    await telemetry?.shutdown();
    await receiver?.close();
  });

  it.each([
    ['http/protobuf', 'application/x-protobuf'],
    ['http/json', 'application/json'],
  ] as const)('%s arrives as %s with names, ids, attributes, events and status', async (protocol, type) => {
    receiver = await OtlpReceiver.start();
    telemetry = startTestTelemetry(receiver, `svc-${protocol}`, 'always_on', protocol);
    const parent = tracer().startSpan('parent');
    parent.end();
    const span = tracer().startSpan('execute_tool tools.x', {
      attributes: {
        'gen_ai.tool.name': 'tools.x',
        'codecall.replayed': false,
        n: 42,
        ratio: 0.5,
        list: ['a', 'b'],
      },
      links: [{ context: parent.spanContext() }],
    });
    span.addEvent('codecall.approval.requested', { 'codecall.approval.expires_at': 7 });
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    await telemetry?.forceFlush();
    const r = receiver;
    await r.waitFor((spans) => spans.some((s) => s.name === 'execute_tool tools.x'));
    expect(r.headers.every((h) => h['content-type'] === type)).toBe(true);
    const got = r.spans.find((s) => s.name === 'execute_tool tools.x');
    expect(got).toMatchObject({
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: '',
      attributes: {
        'gen_ai.tool.name': 'tools.x',
        'codecall.replayed': false,
        n: 42,
        ratio: 0.5,
        list: ['a', 'b'],
      },
      events: [{ name: 'codecall.approval.requested', attributes: { 'codecall.approval.expires_at': 7 } }],
      links: [{ traceId: parent.spanContext().traceId, spanId: parent.spanContext().spanId }],
      status: 2,
      service: `svc-${protocol}`,
    });
    expect(got!.end).toBeGreaterThanOrEqual(got!.start);
    expect(got!.start).toBeGreaterThan(0n);
  });
});
