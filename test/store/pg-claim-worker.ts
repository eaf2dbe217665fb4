// Child process for the cross-node claim race on PostgreSQL: a node of its own (its own pool). Says "ready" on
// stderr, waits for stdin data (so all start together), claims until nothing is left (or `hold` claims are held,
// never ended, so caps are tested), prints the task ids claimed.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';

const [url, schema, owner, optionsJson] = process.argv.slice(2);
if (url === undefined || schema === undefined || owner === undefined) {
  throw new Error('usage: pg-claim-worker <url> <schema> <owner> [options json]');
}
const options = JSON.parse(optionsJson ?? '{}') as { maxRunning?: number; maxPerTenant?: number };
const store = await createPostgresTaskStore({ url, schema, poolSize: 2 });
const go = once(process.stdin, 'data');
process.stderr.write('ready\n');
await go;
process.stdin.pause();
const claimed: string[] = [];
let idle = 0;
// With caps, nothing may be claimable for a moment while the others claim: stop after a quiet spell.
while (idle < 20) {
  const lease = await store.claimTask(owner, { leaseMs: 600_000, ...options });
  if (lease === null) {
    idle++;
    await sleep(5);
    continue;
  }
  idle = 0;
  claimed.push(lease.taskId);
  await sleep(Math.random() * 2);
}
await store.close();
process.stdout.write(JSON.stringify(claimed));
