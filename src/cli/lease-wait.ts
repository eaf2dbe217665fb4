import { setTimeout as sleep } from 'node:timers/promises';
import { describeLeaseOwner, leaseOwnerGone } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { TaskLease, TaskStore } from '../spec/index.ts';
import type { CliIo } from './cli-io.ts';
import { shellArg } from './durable-exec.ts';

/**
 * The lease a live process elsewhere holds on a running task, or null when this process may take the task now:
 * it is not running, its lease ran out or was given back, or its holder was a process of this machine that is gone
 * (`runtime.run` ends such a lease at once).
 */
export async function leaseHeldElsewhere(store: TaskStore, taskId: string): Promise<TaskLease | null> {
  const task = await store.getTask(taskId);
  const lease = task?.status === 'running' ? task.lease : undefined;
  if (lease === undefined || lease.expiresAt === null || lease.expiresAt <= Date.now()) return null;
  return leaseOwnerGone(lease.owner) ? null : lease;
}

function untilText(expiresAt: number): string {
  const seconds = Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000));
  return `${new Date(expiresAt).toISOString()} (in ${seconds} s)`;
}

/** `tasks resume` of a task another live process runs, without --wait: who holds it, until when, what to do. */
export function leaseHeldError(
  taskId: string,
  db: string,
  lease: TaskLease & { expiresAt: number },
): CodecallError {
  return new CodecallError(
    'ILLEGAL_TRANSITION',
    `task ${taskId} is running in another process: ${describeLeaseOwner(lease.owner)} holds its lease until ${untilText(lease.expiresAt)}. ` +
      `To take it over once that process lets go of it or stops renewing it: codecall tasks resume ${taskId} --db ${shellArg(db)} --wait`,
    { details: { status: 'running', lease_owner: lease.owner, lease_expires_at: lease.expiresAt } },
  );
}

/**
 * Waits until no live process elsewhere holds the task's lease (it ran out, was given back, or its holder died),
 * saying on stderr what it waits for and, at most every 5 s, that the holder renewed it. False when `signal`
 * stopped the wait.
 */
export async function waitForLease(
  store: TaskStore,
  taskId: string,
  io: CliIo,
  signal: AbortSignal,
): Promise<boolean> {
  let said: { expiresAt: number; at: number } | null = null;
  for (;;) {
    if (signal.aborted) return false;
    const lease = await leaseHeldElsewhere(store, taskId);
    if (lease === null || lease.expiresAt === null) {
      if (said !== null) io.stderr(`task ${taskId}: the lease is free; taking the task over\n`);
      return true;
    }
    const now = Date.now();
    if (said === null) {
      io.stderr(
        `task ${taskId} is running in another process: ${describeLeaseOwner(lease.owner)} holds its lease until ${untilText(lease.expiresAt)}; waiting for it (Ctrl-C stops waiting)\n`,
      );
      said = { expiresAt: lease.expiresAt, at: now };
    } else if (lease.expiresAt > said.expiresAt && now - said.at >= 5_000) {
      io.stderr(
        `task ${taskId}: its holder renewed the lease, now until ${untilText(lease.expiresAt)}; still waiting\n`,
      );
      said = { expiresAt: lease.expiresAt, at: now };
    }
    await sleep(Math.min(500, Math.max(20, lease.expiresAt - now + 5)), undefined, { signal }).catch(
      () => undefined,
    );
  }
}
