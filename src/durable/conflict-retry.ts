import { isCodecallError } from '../errors/index.ts';

/** How often an optimistic write (read the task, decide, write with `expectedVersion`) is tried. */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly attempts: number;
}

/**
 * A human's action on a task: a conflict means another writer (often the task's own run) got in between, so the
 * action reads the task again and decides again, at once (no backoff: the newer version is already there).
 */
export const CONFLICT_RETRY: RetryPolicy = { attempts: 6 };

/** Runs `attempt` again while it fails with VERSION_CONFLICT and tries are left; any other error ends it at once. */
export async function retryOnConflict<T>(policy: RetryPolicy, attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (e) {
      if (!isCodecallError(e) || e.code !== 'VERSION_CONFLICT' || tries >= policy.attempts) throw e;
    }
  }
}
