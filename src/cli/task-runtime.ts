import { agentForModel } from '../agent/index.ts';
import { createRuntime } from '../durable/index.ts';
import type { ModelConfig } from '../model/index.ts';
import { availableDrivers } from '../sandbox/index.ts';
import type { SandboxDriver, TaskStore } from '../spec/index.ts';
import { ToolRegistry } from '../tools/index.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import { openTaskDb } from './task-db.ts';
import type { Runtime } from '../api/index.ts';

export interface CliRuntime {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  close(): Promise<void>;
}

/**
 * A runtime over the --db file for one CLI command. Only a command that runs code (`runs`) starts a sandbox
 * driver and loads the tools; the others just steer tasks through the store.
 */
export async function openCliRuntime(options: {
  db: string;
  mustExist: boolean;
  runs: boolean;
  tools?: string | undefined;
  /** The model of instruction tasks; without one they fail with MODEL_NOT_CONFIGURED. */
  model?: ModelConfig | null;
}): Promise<CliRuntime> {
  const tools = options.runs && options.tools ? await loadToolsModule(options.tools) : [];
  const store = await openTaskDb(options.db, options.mustExist);
  // A CLI runs a task or two: one warm VM or interpreter each.
  const drivers: SandboxDriver[] = options.runs
    ? (await availableDrivers({ quickjs: { warmVmsPerWorker: 1 }, python: { warm: 1 } })).drivers
    : [];
  const registry = new ToolRegistry(tools);
  const model = options.model ?? null;
  const runtime = createRuntime({
    store,
    drivers,
    tools: registry,
    owner: `cli-${process.pid}`,
    agent: agentForModel(model, registry.definitions),
  });
  return {
    runtime,
    store,
    async close() {
      await runtime.close();
      await Promise.all(drivers.map((d) => d.close()));
      await store.close();
    },
  };
}

export async function withCliRuntime<T>(
  options: Parameters<typeof openCliRuntime>[0],
  fn: (cli: CliRuntime) => Promise<T>,
): Promise<T> {
  const cli = await openCliRuntime(options);
  try {
    return await fn(cli);
  } finally {
    await cli.close();
  }
}
