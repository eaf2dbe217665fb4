// A worker process for the crash tests: runs every task in the database to an end, then exits.
// The parent SIGKILLs it at random moments and starts another.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { runUntilSettled } from './crash-worker-loop.ts';

const [dbPath, effectsPath, owner] = process.argv.slice(2);
if (!dbPath || !effectsPath || !owner) throw new Error('usage: crash-worker DB EFFECTS OWNER');

const effect = defineTool({
  name: 'effect',
  description: 'records a side effect, then answers',
  input: {
    type: 'object',
    properties: { task: { type: 'string' }, i: { type: 'number' } },
    required: ['task', 'i'],
  },
  effect: 'idempotent',
  async execute(args) {
    const { task, i } = args as { task: string; i: number };
    appendFileSync(effectsPath, `${task} ${i} start\n`);
    await sleep(15 + ((i * 7) % 20));
    appendFileSync(effectsPath, `${task} ${i} done\n`);
    return { i, square: i * i };
  },
});

const store = await createSqliteTaskStore({ path: dbPath });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([effect]), owner, leaseMs: 300 });
await driver.ready();
process.stderr.write('ready\n');
await runUntilSettled(runner, store);
await store.close();
await driver.close();
