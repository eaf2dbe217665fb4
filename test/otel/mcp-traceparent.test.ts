import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { connectMcpServers, createQuickJsDriver, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { startMcpHttpServer } from '../support/mcp-test-server.ts';
import { OtlpReceiver, startTestTelemetry } from './otlp-receiver.ts';

// An MCP server over Streamable HTTP is called with the traceparent of the tool call's span.
describe('MCP HTTP requests carry the call span', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null;
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    telemetry = startTestTelemetry(receiver, 'mcp-test');
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-otel-mcp-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await store?.close();
    await driver?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the tools/call request has the execute_tool span as its parent', { timeout: 120_000 }, async () => {
    const server = await startMcpHttpServer();
    const mcp = await connectMcpServers({
      servers: [{ name: 'web', url: server.url, headers: { Authorization: 'Bearer t0ken' } }],
    });
    try {
      const runner = new TaskRunner({ store, driver, tools: new ToolRegistry(mcp.tools), owner: 'otel-mcp' });
      const task = await store.createTask({
        kind: 'code',
        code: `return await tools.web.search({ q: 'an' });`,
        language: 'javascript',
        seed: 1,
      });
      expect((await runner.runTask(task.id))?.status).toBe('succeeded');
      await telemetry?.forceFlush();
      await receiver.waitFor(() =>
        receiver.spans.some((s) => s.name.startsWith('execute_tool') && s.name.endsWith('search')),
      );
      const span = receiver.spans.find((s) => s.name.startsWith('execute_tool') && s.name.endsWith('search'));
      const sent = server.headers.map((h) => h.traceparent).filter((t) => t !== undefined);
      expect(sent).toContain(`00-${span?.traceId}-${span?.spanId}-01`);
      // The config's headers still go.
      expect(server.headers[0]?.authorization).toBe('Bearer t0ken');
    } finally {
      await mcp.close();
      await server.close();
    }
  });
});
