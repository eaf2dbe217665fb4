// Shared set-up of the durable tests: a real quickjs driver and a real SQLite file per describe block.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { createQuickJsDriver, defineTool } from '../../src/internal.ts';
import type { JournalEntryInput, QuickJsDriver, TaskStore, ToolDefinition } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

export interface DurableFixture {
  readonly driver: QuickJsDriver;
  readonly store: TaskStore;
  /** The SQLite file. */
  readonly path: string;
}

/** Registers beforeAll/afterAll hooks; the fields are set once beforeAll has run. */
export function useDurableFixture(name: string): DurableFixture {
  const fx = {} as { driver: QuickJsDriver; store: TaskStore; path: string; dir: string };
  beforeAll(async () => {
    fx.driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    fx.dir = await mkdtemp(join(tmpdir(), `codecall-${name}-`));
    fx.path = join(fx.dir, 'tasks.db');
    fx.store = await createSqliteTaskStore({ path: fx.path });
  });
  afterAll(async () => {
    await fx.store.close();
    await fx.driver.close();
    await rm(fx.dir, { recursive: true, force: true });
  });
  return fx;
}

/**
 * Writes entries into a task's journal as a worker `owner` would have before it died: claims the task, appends,
 * and (unless `keepLease`) gives the lease up so the next claimer recovers it at once.
 */
export async function journalAsDeadWorker(
  store: TaskStore,
  taskId: string,
  entries: readonly JournalEntryInput[],
  options: { owner?: string; leaseMs?: number; keepLease?: boolean } = {},
): Promise<void> {
  const lease = await store.claimTask(options.owner ?? 'dead-worker', {
    leaseMs: options.leaseMs ?? 60_000,
    taskId,
  });
  if (!lease) throw new Error(`task ${taskId} is not claimable`);
  await store.appendJournal(taskId, entries, { fencingToken: lease.fencingToken });
  if (!options.keepLease) await store.releaseLease(lease);
}

/** An unsafe tool that needs approval and records each payment it makes in `paid`. */
export function payTool(paid: unknown[]): ToolDefinition {
  return defineTool({
    name: 'pay',
    description: 'pays (unsafe, needs approval)',
    effect: 'unsafe',
    requiresApproval: true,
    execute: (a) => {
      paid.push(a);
      return 'paid';
    },
  });
}

/** Resolves once `check` holds, polling every 2 ms; throws after `ms`. */
export async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(2);
  }
}
