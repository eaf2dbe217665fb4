import { CodecallError } from '../errors/index.ts';
import type { TaskRecord } from '../spec/index.ts';
import { longTimeout } from '../spec/index.ts';

export const DEFAULT_RETRY_BASE_MS = 1000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;

/** Exponential backoff with full jitter: a uniform wait up to base * 2^retries (capped). */
export function retryDelay(retries: number, baseMs: number): number {
  return Math.floor(Math.random() * Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** retries));
}

export function deadlineExceeded(task: TaskRecord): CodecallError {
  const at = task.deadlineAt === null ? 'its deadline' : new Date(task.deadlineAt).toISOString();
  return new CodecallError('DEADLINE_EXCEEDED', `task ${task.id} passed its deadline (${at})`, {
    details: { deadline: at },
  });
}

/** Aborts `controller` (an AbortController, a TaskRun) with DEADLINE_EXCEEDED at the task's deadline; returns the function that disarms it. */
export function armDeadline(
  task: TaskRecord,
  controller: { abort(reason: unknown): void },
  clock: () => number,
): () => void {
  if (task.deadlineAt === null) return () => undefined;
  const timer = longTimeout(() => controller.abort(deadlineExceeded(task)), task.deadlineAt - clock());
  return () => timer.clear();
}
