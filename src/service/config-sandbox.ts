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
};

/** How many quickjs worker threads the service starts (see `sandboxWorkers`). */
export function sandboxWorkerCount(
  config: { readonly concurrency: number; readonly sandboxWorkers: number | null },
  cpus: number = availableParallelism(),
): number {
  if (config.sandboxWorkers !== null) return config.sandboxWorkers;
  return Math.max(cpus, Math.min(config.concurrency, MAX_DEFAULT_SANDBOX_WORKERS));
}
