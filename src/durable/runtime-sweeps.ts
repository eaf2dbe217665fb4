import { isCodecallError } from '../errors/index.ts';
import { readJournalPaged } from '../spec/index.ts';
import type { TaskRecord, TaskStore } from '../spec/index.ts';
import { resumePaused, timeOutInputs } from './paused-actions.ts';
import type { PausedAction } from './paused-actions.ts';

/** Applies an action to a task as the runtime does (version-guarded, journal and patch in one transaction). */
export type ApplyAction = (task: TaskRecord, action: PausedAction) => Promise<unknown>;

/**
 * Tasks paused by a graceful shutdown, of this server or any other on the store, go on by themselves: every live
 * runtime resumes them on its sweeps (the resume is version-guarded, so of two runtimes one wins). A page at a
 * time until none is left or a page resumed nothing (the others changed meanwhile and are seen next sweep).
 */
export async function resumeAfterShutdown(
  store: TaskStore,
  apply: ApplyAction,
  stopped: () => boolean,
): Promise<void> {
  const limit = 100;
  for (;;) {
    const { tasks } = await store.listTasks({ status: 'paused', pauseReason: 'shutdown', limit });
    let resumed = 0;
    for (const task of tasks) {
      if (stopped()) return;
      if (
        await apply(task, resumePaused(task, 'system')).then(
          () => true,
          () => false,
        )
      )
        resumed++;
    }
    if (tasks.length < limit || resumed === 0) return;
  }
}

/** Paused tasks past their deadline fail (running and queued ones fail in the runner). */
export async function failPastDeadline(
  store: TaskStore,
  clock: () => number,
  apply: ApplyAction,
): Promise<void> {
  const { tasks } = await store.listTasks({ deadlineBefore: clock(), limit: 100 });
  for (const task of tasks) {
    const at = new Date(task.deadlineAt ?? 0).toISOString();
    const message = `task ${task.id} passed its deadline (${at}) while paused (${task.pauseReason ?? 'paused'})`;
    await apply(task, {
      patch: { status: 'failed', error: { code: 'DEADLINE_EXCEEDED', message }, wakeAt: null },
      append: [{ type: 'control', data: { action: 'deadline', deadline: at } }],
    }).catch(() => undefined);
  }
}

/** Paused tasks whose input wait timed out: journals the timeouts and makes them runnable. */
export async function wakeDue(store: TaskStore, clock: () => number, apply: ApplyAction): Promise<void> {
  const { tasks } = await store.listTasks({ dueBefore: clock(), limit: 100 });
  for (const task of tasks) {
    // One task's trouble (a concurrent change) must not hold back the others' wake-ups.
    try {
      const action = timeOutInputs(task, await readJournalPaged(store, task.id), clock());
      if (action) await apply(task, action);
    } catch (e) {
      // A damaged journal fails its task, which so leaves the due list instead of coming back every poll.
      if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') {
        await apply(task, { patch: { status: 'failed', error: e.toJSON(), wakeAt: null }, append: [] }).catch(
          () => undefined,
        );
      }
    }
  }
}
