import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createRuntime } from '../durable/index.ts';
import { buildServer } from '../http/index.ts';
import { createQuickJsDriver } from '../sandbox/index.ts';
import { createMetrics } from '../service/metrics/index.ts';
import { ToolRegistry } from '../tools/index.ts';
import type { CliIo } from './exec-command.ts';
import { loadToolsModule } from './load-tools.ts';
import { integerOption } from './number-options.ts';
import { openTaskDb } from './task-db.ts';

export interface ServeOptions {
  port?: string;
  host?: string;
  db?: string;
  tools?: string;
  concurrency?: string;
}

export const DEFAULT_DB = 'data/codecall.db';

/**
 * `codecall serve`: the task API on embedded defaults (an SQLite file under ./data, the quickjs driver). SIGTERM
 * or SIGINT stops accepting, pauses running tasks (`shutdown`) and exits; they resume on the next start.
 */
export async function serveCommand(options: ServeOptions, io: CliIo): Promise<number> {
  const port = integerOption('--port', options.port ?? '8080', { min: 0, max: 65_535 });
  const concurrency = integerOption('--concurrency', options.concurrency ?? '4', { min: 1, max: 10_000 });
  const host = options.host ?? '127.0.0.1';
  const dbPath = options.db ?? DEFAULT_DB;
  const tools = options.tools ? await loadToolsModule(options.tools) : [];
  await mkdir(dirname(dbPath), { recursive: true });
  const store = await openTaskDb(dbPath, false);
  // The metrics come first: the driver and the runtime report to them through their observers.
  const metrics = createMetrics({ store });
  const driver = createQuickJsDriver({ observer: metrics.sandboxObserver });
  const runtime = createRuntime({
    store,
    drivers: [driver],
    tools: new ToolRegistry(tools),
    concurrency,
    observer: metrics.runtimeObserver,
  });
  metrics.watch(runtime);
  const app = buildServer({ runtime, store, metrics });
  await driver.ready();
  runtime.start();
  const address = await app.listen({ port, host });
  io.stderr(
    `codecall serving on ${address} (db ${dbPath}, ${tools.length} tools, concurrency ${concurrency})\n`,
  );
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      io.stderr(`${signal}: pausing running tasks and stopping\n`);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await stopped;
  await app.close();
  await runtime.close({ pauseRunning: true });
  metrics.close();
  await driver.close();
  await store.close();
  return 0;
}
