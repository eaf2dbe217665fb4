// A worker process for the Promise.all crash test: runs every task in the database to an end, then exits.
// With BLOCK ("task i"), that one call blocks until the process dies: the parent SIGKILLs it once the other two
// calls' outcomes are journaled, so exactly two are.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { runUntilSettled } from './crash-worker-loop.ts';

const [dbPath, effectsPath, owner, block] = process.argv.slice(2);
if (!dbPath || !effectsPath || !owner)
  throw new Error('usage: crash-worker-promise-all DB EFFECTS OWNER [BLOCK]');

const work = defineTool({
  name: 'work',
  description: 'records a side effect, waits `delay` ms, then answers',
  input: {
    type: 'object',
    properties: { task: { type: 'string' }, i: { type: 'number' }, delay: { type: 'number' } },
    required: ['task', 'i', 'delay'],
  },
  effect: 'idempotent',
  async execute(args, ctx) {
    const { task, i, delay } = args as { task: string; i: number; delay: number };
    appendFileSync(effectsPath, `${task} ${i} start\n`);
    if (`${task} ${i}` === block) {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      throw new Error('aborted');
    }
    await sleep(delay);
    appendFileSync(effectsPath, `${task} ${i} done\n`);
    return { i, value: i * 1000 + delay };
  },
});

const store = await createSqliteTaskStore({ path: dbPath });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([work]), owner, leaseMs: 300 });
await runUntilSettled(runner, store);
await store.close();
await driver.close();
