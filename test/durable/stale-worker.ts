// A worker process that stalls past its lease at the worst moment: right after the intent of a `charge` call is
// committed and before the tool starts, its event loop stands still (as under SIGSTOP: no timer, no renewal) for
// STALL_MS. Each side effect goes to the ledger file with this worker's pid and the fencing token it was handed.
import { appendFileSync } from 'node:fs';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

const [dbPath, ledgerPath, taskId, stallMs] = process.argv.slice(2);
if (!dbPath || !ledgerPath || !taskId || !stallMs)
  throw new Error('usage: stale-worker DB LEDGER TASK STALL_MS');

const line = (what: string, token: number | undefined) =>
  appendFileSync(ledgerPath, `${JSON.stringify({ what, pid: process.pid, token: token ?? null })}\n`);
const tools = new ToolRegistry([
  defineTool({
    name: 'note',
    description: 'a side effect before the stall (keyed)',
    effect: 'keyed',
    execute(_args, ctx) {
      line('note', ctx.fencingToken);
      return 'noted';
    },
  }),
  defineTool({
    name: 'charge',
    description: 'charges (unsafe)',
    effect: 'unsafe',
    execute(_args, ctx) {
      line('charge', ctx.fencingToken);
      return 'charged';
    },
  }),
]);
const lines: string[] = [];
const inner = await createSqliteTaskStore({ path: dbPath });
// The fault: the process stands still once the charge's intent is durable.
const store = new Proxy(inner, {
  get(target, prop) {
    const value = Reflect.get(target, prop, target) as unknown;
    if (prop !== 'appendJournal') {
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    }
    return async (...args: Parameters<typeof inner.appendJournal>) => {
      const written = await target.appendJournal(...args);
      if (args[1].some((e) => e.type === 'tool_intent' && e.data.tool === 'tools.charge')) {
        line('stall', undefined);
        const end = Date.now() + Number(stallMs);
        while (Date.now() < end) {
          // The whole process stands still.
        }
      }
      return written;
    };
  },
});
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
const runner = new TaskRunner({
  store,
  driver,
  tools,
  owner: 'stale',
  leaseMs: 300,
  log: (l) => lines.push(l),
});
await driver.ready();
const ended = await runner.runTask(taskId).catch((e: unknown) => ({ thrown: String(e) }));
process.stdout.write(`${JSON.stringify({ ended, log: lines })}\n`);
await inner.close();
await driver.close();
