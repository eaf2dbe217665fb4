// A worker process for the agent crash tests: runs one instruction task and SIGKILLs itself the moment a chosen
// entry is committed: `reply` (the model's first reply, before its code made a tool call) or `outcome:N` (the
// N-th tool outcome of the task).
import { appendFileSync } from 'node:fs';
import { createAgent } from '../../src/agent/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import { createQuickJsDriver, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { agentTools } from './agent-fixture.ts';
import type { CallLog } from './agent-fixture.ts';

const [dbPath, baseUrl, taskId, callsPath, killAt = 'reply'] = process.argv.slice(2);
if (!dbPath || !baseUrl || !taskId || !callsPath) {
  throw new Error('usage: crash-worker-agent DB MODEL_URL TASK CALLS [reply|outcome:N]');
}
const killAfterOutcomes = killAt.startsWith('outcome:') ? Number(killAt.slice('outcome:'.length)) : null;
let outcomes = 0;

const calls: CallLog[] = [];
const registry = new ToolRegistry(agentTools(calls, 40));
const store = await createSqliteTaskStore({ path: dbPath });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
const runtime = createRuntime({
  store,
  drivers: [driver],
  tools: {
    bindings: registry.bindings,
    get: (ns, name) => registry.get(ns, name),
    host: (options) => {
      const host = registry.host(options);
      return {
        ...host,
        call: (call, signal) => {
          if (call.kind === 'tool') appendFileSync(callsPath, `${call.name} ${JSON.stringify(call.args)}\n`);
          return host.call(call, signal);
        },
      };
    },
  },
  leaseMs: 300,
  agent: createAgent({
    model: createOpenAiClient({ provider: 'openai', baseUrl, model: 'scripted' }),
    tools: registry.definitions,
  }),
});
runtime.subscribe(taskId, (event) => {
  if (event.type !== 'journal') return;
  if (killAfterOutcomes === null && event.entries.some((e) => e.type === 'model_reply')) {
    process.kill(process.pid, 'SIGKILL');
  }
  outcomes += event.entries.filter((e) => e.type === 'tool_outcome').length;
  if (killAfterOutcomes !== null && outcomes >= killAfterOutcomes) process.kill(process.pid, 'SIGKILL');
});
await driver.ready();
process.stderr.write('ready\n');
const view = await runtime.run(taskId);
process.stderr.write(`not killed: ${view.status} ${JSON.stringify(view.error)}\n`);
process.exit(3);
