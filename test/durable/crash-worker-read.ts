// A worker process for the read-call crash test: a `read` tool that records each start and end, and waits for a
// release file when asked to (so the parent can SIGKILL it mid-read), and an `unsafe` tool beside it.
import { appendFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { runUntilSettled } from './crash-worker-loop.ts';

const [dbPath, effectsPath, owner, hold] = process.argv.slice(2);
if (!dbPath || !effectsPath || !owner)
  throw new Error('usage: crash-worker-read DB EFFECTS OWNER [HOLD_FILE]');

const look = defineTool({
  name: 'look',
  description: 'reads an item (a slow one waits while the hold file exists)',
  input: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
  effect: 'read',
  async execute(args) {
    const { i } = args as { i: number };
    appendFileSync(effectsPath, `look ${String(i)} start\n`);
    while (hold && i === 2 && existsSync(hold)) await sleep(20);
    appendFileSync(effectsPath, `look ${String(i)} done\n`);
    return { i, twice: i * 2 };
  },
});
const write = defineTool({
  name: 'write',
  description: 'writes an item once',
  input: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
  effect: 'unsafe',
  execute(args) {
    const { i } = args as { i: number };
    appendFileSync(effectsPath, `write ${String(i)}\n`);
    return { wrote: i };
  },
});

const store = await createSqliteTaskStore({ path: dbPath });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([look, write]), owner, leaseMs: 300 });
await driver.ready();
process.stderr.write('ready\n');
await runUntilSettled(runner, store);
await store.close();
await driver.close();
