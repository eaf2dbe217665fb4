// A worker process for the unsafe-call crash test: three lanes run every task in the database until each has
// ended or paused, then it exits. The tasks mix an idempotent tool (`stock`) and an unsafe one (`charge`); both
// log `TASK TOOL I start|done` to the side-effect file. Prints "ready" once it can run tasks; the parent
// SIGKILLs it at random moments after that and starts another.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, isTerminal, ToolRegistry } from '../../src/index.ts';
import type { TaskStatus } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { runUntilSettled } from './crash-worker-loop.ts';

const [dbPath, effectsPath, owner] = process.argv.slice(2);
if (!dbPath || !effectsPath || !owner) throw new Error('usage: crash-worker-unsafe DB EFFECTS OWNER');

const input = {
  type: 'object',
  properties: { task: { type: 'string' }, i: { type: 'number' } },
  required: ['task', 'i'],
} as const;

const stock = defineTool({
  name: 'stock',
  description: 'reserves stock (idempotent), then answers',
  input,
  effect: 'idempotent',
  async execute(args) {
    const { task, i } = args as { task: string; i: number };
    appendFileSync(effectsPath, `${task} stock ${i} start\n`);
    await sleep(20 + ((i * 13) % 30));
    appendFileSync(effectsPath, `${task} stock ${i} done\n`);
    return { i, sq: i * i };
  },
});

const charge = defineTool({
  name: 'charge',
  description: 'charges a card (unsafe: must never run twice)',
  input,
  effect: 'unsafe',
  async execute(args) {
    const { task, i } = args as { task: string; i: number };
    appendFileSync(effectsPath, `${task} charge ${i} start\n`);
    await sleep(25 + ((i * 7) % 25));
    appendFileSync(effectsPath, `${task} charge ${i} done\n`);
    return { i, cents: i * 100 };
  },
});

const store = await createSqliteTaskStore({ path: dbPath });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 2 });
await driver.ready();
const runner = new TaskRunner({
  store,
  driver,
  tools: new ToolRegistry([stock, charge]),
  owner,
  // Long enough that a busy machine's event-loop stalls never lose a lease (that would be a second run of a task
  // without a kill); a dead worker's tasks wait this long for the next one.
  leaseMs: 1_000,
  // This test is about side effects; workers killed again and again before a task progresses must not fail it
  // with CRASH_LOOP (crash-loop.test.ts covers that).
  maxStalledAttempts: 1_000,
});
process.stdout.write('ready\n');

// Three lanes, so tasks run side by side; a task paused for attention counts as settled here.
const settled = (status: TaskStatus): boolean => status === 'paused' || isTerminal(status);
await Promise.all([0, 1, 2].map(() => runUntilSettled(runner, store, settled)));
await store.close();
await driver.close();
