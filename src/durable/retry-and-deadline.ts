import { CodecallError } from '../errors/index.ts';
import type { TaskRecord } from '../spec/index.ts';
import { longTimeout } from '../spec/index.ts';

export const DEFAULT_RETRY_BASE_MS = 1000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;

/** Exponential backoff with full jitter: a uniform wait up to base * 2^retries (capped). */
export function retryDelay(retries: number, baseMs: number): number {
  return Math.floor(Math.random() * Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** retries));
}

export const DEFAULT_TOOL_UNAVAILABLE_RETRIES = 5;
export const DEFAULT_TOOL_UNAVAILABLE_BASE_MS = 2000;

/**
 * The wait before run again `n + 1` after a tool's service was down: base * 2^n, half of it jittered (capped).
 * Never near 0 (unlike `retryDelay`): a server that restarts, or a connection waiting out its own backoff, needs
 * the time, and a few quick tries in a row would spend the budget on one outage.
 */
export function unavailableDelay(n: number, baseMs: number): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** n);
  return Math.floor(full / 2 + (Math.random() * full) / 2);
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
