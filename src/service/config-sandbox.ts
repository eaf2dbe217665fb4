import { availableParallelism } from 'node:os';
import { z } from 'zod';

/** The default pool's upper bound: past it an operator sets sandboxWorkers (each thread costs ~15 MB RSS). */
export const MAX_DEFAULT_SANDBOX_WORKERS = 32;

/** The quickjs sandbox's threads (ADR 0033). */
export const sandboxConfigShape = {
  /**
   * QuickJS worker threads. Null (default): one per run slot (`concurrency`), at least one per CPU, at most 32.
   * A guest's synchronous code holds its thread, so with fewer threads than slots one tenant's CPU-bound tasks
   * hold another tenant's task behind them.
   */
  sandboxWorkers: z.number().int().min(1).max(1024).nullable().default(null),
  /**
   * The nice value of those threads on Linux (default 10; 0 = the server's own). A tenant's CPU-bound tasks then
   * take the cores the event loop leaves idle, never the time it needs to serve the others.
   */
  sandboxNice: z.number().int().min(0).max(19).default(10),
  /**
   * Bytes of paused VMs kept in memory to resume from instead of replaying the journal (ADR 0056; default 64 MiB,
   * ~45 paused tasks; 0 keeps none). Least recently paused first out; one lost only means a replay.
   */
  pausedVmBudgetBytes: z
    .number()
    .int()
    .min(0)
    .max(64 * 1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
};

/** How many quickjs worker threads the service starts (see `sandboxWorkers`). */
export function sandboxWorkerCount(
  config: { readonly concurrency: number; readonly sandboxWorkers: number | null },
  cpus: number = availableParallelism(),
): number {
  if (config.sandboxWorkers !== null) return config.sandboxWorkers;
  return Math.max(cpus, Math.min(config.concurrency, MAX_DEFAULT_SANDBOX_WORKERS));
}
