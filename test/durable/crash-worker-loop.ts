// The loop of a crash-test worker process: run tasks until `settled` says every task is where it should end.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskRunner } from '../../src/durable/index.ts';
import { isTerminal } from '../../src/index.ts';
import type { TaskStatus, TaskStore } from '../../src/index.ts';

/** Every task has ended (default), or another condition. */
export async function runUntilSettled(
  runner: TaskRunner,
  store: TaskStore,
  settled: (status: TaskStatus) => boolean = isTerminal,
): Promise<void> {
  for (;;) {
    const ran = await runner.runNext();
    if (ran) continue;
    const { tasks } = await store.listTasks({ limit: 1000 });
    if (tasks.every((t) => settled(t.status))) return;
    await sleep(50); // a killed predecessor's lease has not expired yet
  }
}
