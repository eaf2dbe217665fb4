// A worker process for the egress crash test: runs every task in the database with an egress that may reach
// loopback, until each has ended or paused. The parent SIGKILLs it while requests are in flight.
import { TaskRunner } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { createQuickJsDriver, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { runUntilSettled } from './crash-worker-loop.ts';

const [dbPath, owner] = process.argv.slice(2);
if (!dbPath || !owner) throw new Error('usage: crash-worker-egress DB OWNER');

const store = await createSqliteTaskStore({ path: dbPath });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
const runner = new TaskRunner({
  store,
  driver,
  tools: new ToolRegistry([]),
  owner,
  leaseMs: 300,
  egress: createEgress({ allowPrivate: true }),
});
await driver.ready();
process.stderr.write('ready\n');
// Every claimable task at once, so that each has a request in flight when the parent kills this process.
const started: Promise<unknown>[] = [];
for (let next = await runner.startNext(); next !== null; next = await runner.startNext())
  started.push(next.done);
await Promise.allSettled(started);
await runUntilSettled(runner, store, (status) => status !== 'pending' && status !== 'running');
await store.close();
await driver.close();
