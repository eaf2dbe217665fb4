import { z } from 'zod';

const TOOL_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*\.[A-Za-z_$][A-Za-z0-9_$]*$/;

/** One tool's budget ceiling, in the wire's form of a task's `budgets.tools` entry. */
const toolBudgetCeiling = z
  .object({
    max_calls: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    max_wall_seconds: z.number().min(0).max(31_536_000).optional(),
  })
  .strict();

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What one tenant may take (ADR 0023): ceilings on what a task asks for, and a tenant's default share of slots. */
export const ceilingsConfigShape = {
  /** Largest tool_constraints.timeout_seconds a task may ask for (default 3600). */
  maxTimeoutSeconds: z.number().positive().max(2_147_483).default(3600),
  /** Largest tool_constraints.cpu_seconds (default 600). */
  maxCpuSeconds: z.number().positive().max(2_147_483).default(600),
  /** Largest tool_constraints.max_memory_mb (default 1024: a task cannot take the host's memory). */
  maxMemoryMb: z
    .number()
    .min(2)
    .max(1024 * 1024)
    .default(1024),
  /** Highest priority a task may ask for (default 100; priority orders a tenant's own tasks only). */
  maxPriority: z.number().int().min(-100).max(100).default(100),
  /** Furthest deadline_seconds (default 604800, a week). */
  maxDeadlineSeconds: z.number().positive().max(31_536_000).default(604_800),
  /** Most max_retries (default 10). */
  maxRetries: z.number().int().min(0).max(10).default(10),
  /**
   * Largest `code` or `instruction` of a task in UTF-8 bytes (default 1 MiB); above it the task is 413
   * PAYLOAD_TOO_LARGE naming the field. Every list and stream of the tenant reads the task's row.
   */
  maxCodeBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  /** Largest `metadata` of a task as JSON, in UTF-8 bytes (default 64 KiB). */
  maxMetadataBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(64 * 1024),
  /**
   * Most tool_constraints.budgets.max_calls (all tools together; ADR 0044); a task that sets none runs with this
   * one. Default: none.
   */
  maxTaskToolCalls: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().default(null),
  /** Most tool_constraints.budgets.max_cost (the sum of the calls' costs); a task that sets none runs with it. */
  maxTaskCost: z.number().min(0).max(Number.MAX_SAFE_INTEGER).nullable().default(null),
  /**
   * Per tool, the most `max_calls` and `max_wall_seconds` of a task's budgets.tools entry, `{ "web.search":
   * { "max_calls": 20 } }` (the environment gives it as that JSON); a task that sets none runs with these.
   */
  maxToolBudgets: z
    .preprocess(
      (v) => (typeof v === 'string' ? parseJson(v) : v),
      z.record(z.string().regex(TOOL_NAME, 'must be "namespace.name"'), toolBudgetCeiling),
    )
    .default({}),
  /**
   * Each tenant's own budget ceilings, `{ "acme": { "max_calls": 500, "tools": { "web.search": { "max_calls": 50 } } },
   * "*": { "max_calls": 50 } }` (a task's `budgets` form; `*`: the tenants not named). Field by field they replace
   * maxTaskToolCalls, maxTaskCost and a tool's maxToolBudgets entry for that tenant. Default: none.
   */
  tenantBudgetCeilings: z
    .preprocess(
      (v) => (typeof v === 'string' ? parseJson(v) : v),
      z.record(z.string().min(1).max(256), z.unknown()).refine((r) => Object.keys(r).length <= 10_000, {
        message: 'at most 10000 tenants',
      }),
    )
    .default({}),
  /**
   * Tasks of one tenant not yet ended (pending, running or paused) at once (default 10000); a submission, batch or
   * revision that would go over is 429 TOO_MANY_TASKS. Bounds what one tenant's queue flood adds to the database.
   */
  maxLiveTasksPerTenant: z.number().int().min(1).max(100_000_000).default(10_000),
  /**
   * A tenant's soft share, ceil(concurrency * tenantShare) slots (default 0.5, at least 1): past it, a tenant gets a
   * free slot only when no tenant below its share has a claimable task (work-conserving; ADR 0023).
   */
  tenantShare: z.number().gt(0).max(1).default(0.5),
  /**
   * Slots a tenant past its share may not borrow (default 1): they stay free for a tenant below its share, whose
   * task then starts at once instead of waiting for a borrowed slot's task to end (there is no preemption). 0 makes
   * the share fully work-conserving.
   */
  tenantReserve: z.number().int().min(0).max(10_000).default(1),
};
