// Shared set-up of the agent tests: a real runtime (SQLite file, quickjs) whose model is a scripted
// chat-completions server on loopback.
import { dirname } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import type { RuntimeOptions } from '../../src/durable/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import type { OpenAiClientOptions } from '../../src/model/index.ts';
import { defineTool, ToolRegistry } from '../../src/tools/index.ts';
import type { ToolDefinition } from '../../src/spec/index.ts';
import { startScriptedModelServer } from '../model/scripted-model-server.ts';
import type { ScriptedModelServer } from '../model/scripted-model-server.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import { typeScriptLowering } from '../../src/sandbox/index.ts';
import type { Runtime } from '../../src/api/index.ts';

/** Tool calls as they ran: name, arguments, start and end (performance.now()). */
export interface CallLog {
  readonly name: string;
  readonly args: unknown;
  readonly start: number;
  end: number;
}

export function agentTools(calls: CallLog[], delayMs = 0): ToolDefinition[] {
  const logged =
    <T>(name: string, fn: (args: T) => unknown) =>
    async (args: T): Promise<unknown> => {
      const entry: CallLog = { name, args, start: performance.now(), end: 0 };
      calls.push(entry);
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      entry.end = performance.now();
      return fn(args);
    };
  return [
    defineTool({
      name: 'get_price',
      description: 'Price of a product in cents.',
      input: z.object({ product: z.string().describe('Product name') }),
      output: z.object({ product: z.string(), cents: z.number() }),
      effect: 'read',
      execute: logged('get_price', ({ product }: { product: string }) => {
        if (product === 'unicorn') throw new Error('no such product: unicorn');
        return { product, cents: product.length * 100 };
      }),
    }),
    defineTool({
      name: 'send_invoice',
      description: 'Sends an invoice; needs approval.',
      input: z.object({ to: z.string(), cents: z.number() }),
      effect: 'unsafe',
      requiresApproval: true,
      execute: logged('send_invoice', ({ to, cents }: { to: string; cents: number }) => ({
        sent: true,
        to,
        cents,
      })),
    }),
  ];
}

export interface AgentFixture {
  model: ScriptedModelServer;
  driver: ReturnType<typeof useDurableFixture>['driver'];
  /** The SQLite file and its (temporary) directory. */
  path: string;
  dir: string;
  runtime: Runtime;
  calls: CallLog[];
}

/** Registers hooks: one model server and store per file, a fresh runtime and call log per test. */
export function useAgentFixture(
  name: string,
  options: {
    toolDelayMs?: number;
    runtime?: Partial<RuntimeOptions>;
    /** More options of the model client (a provider, stream validation). */
    model?: Partial<OpenAiClientOptions>;
  } = {},
): AgentFixture & { readonly store: ReturnType<typeof useDurableFixture>['store'] } {
  const durable = useDurableFixture(name);
  const fx = { calls: [] } as unknown as AgentFixture & { store: typeof durable.store };
  beforeAll(async () => {
    fx.model = await startScriptedModelServer();
    fx.store = durable.store;
    fx.driver = durable.driver;
    fx.path = durable.path;
    fx.dir = dirname(durable.path);
    const tools = agentTools(fx.calls, options.toolDelayMs ?? 0);
    const registry = new ToolRegistry(tools);
    fx.runtime = createRuntime({
      store: durable.store,
      drivers: [durable.driver],
      tools: registry,
      agent: createAgent({
        model: createOpenAiClient({
          provider: 'openai',
          baseUrl: fx.model.baseUrl,
          model: 'scripted',
          maxRetries: 2,
          ...options.model,
        }),
        tools: registry.definitions,
        strictTools: true,
        lowering: typeScriptLowering,
      }),
      ...options.runtime,
    });
  });
  afterEach(() => {
    fx.calls.length = 0;
  });
  afterAll(async () => {
    await fx.runtime.close({ pauseRunning: true });
    await fx.model.close();
  });
  return fx;
}

/** A reply whose content is one fenced JavaScript block. */
export function js(code: string): string {
  return `Here is the code:\n\`\`\`javascript\n${code}\n\`\`\``;
}
