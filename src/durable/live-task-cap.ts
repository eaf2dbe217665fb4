import { CodecallError } from '../errors/index.ts';
import type { TaskStatus, TaskStore } from '../spec/index.ts';

/** What counts against a tenant's cap: tasks that have not ended (they hold rows, journals and, paused, a place). */
const LIVE: readonly TaskStatus[] = ['pending', 'running', 'paused'];

/**
 * Refuses `adding` more tasks of `tenant` when it would then hold more than `cap` live ones (pending, running or
 * paused): one tenant's queue flood would otherwise grow the database without bound for every tenant. Counted on
 * the store (indexed by tenant and status), so the cap holds across servers up to submissions racing each other.
 */
export async function checkLiveTasks(
  store: TaskStore,
  tenant: string,
  adding: number,
  cap: number | undefined,
): Promise<void> {
  if (cap === undefined) return;
  let live = 0;
  for (const status of LIVE) live += await store.countTasks({ tenant, status });
  if (live + adding <= cap) return;
  throw new CodecallError(
    'TOO_MANY_TASKS',
    `tenant ${tenant} has ${live} tasks that have not ended (pending, running or paused); ` +
      `${adding === 1 ? 'one more' : `${adding} more`} would be over its cap of ${cap}: wait for some to end, or cancel some`,
    { details: { tenant, live, adding, cap } },
  );
}
