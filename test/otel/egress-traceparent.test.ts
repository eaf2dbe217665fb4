import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/api/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import { startRecordingServer } from '../durable/egress-test-server.ts';
import type { RecordingServer } from '../durable/egress-test-server.ts';
import { OtlpReceiver, startTestTelemetry } from './otlp-receiver.ts';

// The program's fetch, sent by the host, carries the trace of its call's span (and a traceparent the program set
// itself wins); a replay's journaled request is unchanged by it.
describe("egress requests carry the call's traceparent", () => {
  const fx = useDurableFixture('otel-egress');
  let server: RecordingServer;
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null;
  let runtime: Runtime;
  beforeAll(async () => {
    server = await startRecordingServer((_req, _raw, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return true;
    });
    receiver = await OtlpReceiver.start();
    telemetry = startTestTelemetry(receiver, 'egress-test');
    runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 20,
      egress: createEgress({ allowPrivate: true }),
    });
    runtime.start();
  });
  afterAll(async () => {
    await runtime?.close();
    await telemetry?.shutdown();
    await receiver?.close();
    await server?.close();
  });

  it('adds traceparent to a fetch, keeps the one a program set, and journals neither', async () => {
    const base = `http://127.0.0.1:${server.port}`;
    const task = await runtime.submit({
      code: `
        await fetch('${base}/plain');
        await fetch('${base}/own', { headers: { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' } });
        return 1;`,
      constraints: { networkAccess: { allow: [`127.0.0.1:${server.port}`], allowHttp: true } },
    });
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    expect(done.status).toBe('succeeded');
    const plain = server.seen.find((s) => s.url === '/plain');
    const own = server.seen.find((s) => s.url === '/own');
    expect(own?.headers.traceparent).toBe('00-11111111111111111111111111111111-2222222222222222-01');
    await telemetry?.forceFlush();
    await receiver.waitFor(() => receiver.spans.some((s) => s.name === 'execute_tool egress.read'));
    const calls = receiver.spans.filter((s) => s.name === 'execute_tool egress.read');
    const ids = calls.map((s) => `00-${s.traceId}-${s.spanId}-01`);
    expect(ids).toContain(plain?.headers.traceparent);
    const journal = await fx.store.readJournal(task.task_id);
    // The call span's id (the run's trace id is journaled with its attempt) is in no journaled request.
    expect(JSON.stringify(journal)).not.toContain(String(plain?.headers.traceparent).slice(36, 52));
  });
});
