// Child process for the cross-process claim race. Opens the store, says "ready" on stderr, waits for any
// stdin data (so both workers start claiming together), claims until nothing is left, prints the task ids.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSqliteTaskStore } from '../../src/store/index.ts';

const [path, owner] = process.argv.slice(2);
if (path === undefined || owner === undefined) throw new Error('usage: claim-worker <path> <owner>');
const store = await createSqliteTaskStore({ path, busyTimeoutMs: 10_000 });
const go = once(process.stdin, 'data');
process.stderr.write('ready\n');
await go;
process.stdin.pause();
const claimed: string[] = [];
for (;;) {
  const lease = await store.claimTask(owner, { leaseMs: 600_000 });
  if (lease === null) break;
  claimed.push(lease.taskId);
  // Let go of the lock for a moment so the other worker's claims interleave with ours.
  await sleep(Math.random() * 2);
}
await store.close();
process.stdout.write(JSON.stringify(claimed));
