import { CodecallError } from '../errors/index.ts';
import type { SubmitInput } from '../api/index.ts';
import {
  budgetCeilingsFor,
  checkNetworkAccess,
  checkTaskBudgets,
  checkTenantNetwork,
  networkPolicyFor,
} from '../spec/index.ts';
import type {
  BudgetCeilings,
  TenantBudgetCeilings,
  TenantNetworkPolicies,
  ToolBudget,
} from '../spec/index.ts';

/**
 * The most a task may ask for (ADR 0023), in the units of the HTTP API: an operator bounds what one tenant's task
 * can take of the host. A request above a ceiling is refused (never clamped), so the caller learns the bound.
 */
export interface LimitCeilings {
  readonly maxTimeoutSeconds?: number;
  readonly maxCpuSeconds?: number;
  readonly maxMemoryMb?: number;
  readonly maxPriority?: number;
  /** How far ahead of submission a deadline may lie. */
  readonly maxDeadlineSeconds?: number;
  readonly maxRetries?: number;
  /** Largest `code` or `instruction` in UTF-8 bytes (default DEFAULT_MAX_CODE_BYTES). */
  readonly maxCodeBytes?: number;
  /** Largest `metadata` as JSON text in UTF-8 bytes (default DEFAULT_MAX_METADATA_BYTES). */
  readonly maxMetadataBytes?: number;
  /** Tasks of one tenant not yet ended (pending, running, paused) at once; more is TOO_MANY_TASKS. Default: no cap. */
  readonly maxLiveTasksPerTenant?: number;
  /** What each tenant's tasks may ask of the network (`*`: the others); none: the operator's ceilings only. */
  readonly networkPolicies?: TenantNetworkPolicies;
  /**
   * Most `tool_constraints.budgets.max_calls` (all tools together, ADR 0044); a task that sets none runs with this
   * one. Default: no ceiling.
   */
  readonly maxTaskToolCalls?: number;
  /** Most `tool_constraints.budgets.max_cost`; a task that sets none runs with this one. Default: no ceiling. */
  readonly maxTaskCost?: number;
  /**
   * By tool (`namespace.name`): most `max_calls` and `max_wall_seconds` of the tool's entry in a task's
   * `budgets.tools`; a task that sets none runs with these (and the tool's own declared budget, the smaller wins).
   */
  readonly maxToolBudgets?: Readonly<Record<string, ToolBudget>>;
  /** Each tenant's own budget ceilings (`*`: the others), field by field over the three above. */
  readonly tenantBudgetCeilings?: TenantBudgetCeilings;
}

/** The global budget ceilings among the ceilings (undefined: none); a run applies its tenant's (budgetCeilingsFor). */
export function budgetCeilingsOf(ceilings: LimitCeilings): BudgetCeilings | undefined {
  const { maxTaskToolCalls, maxTaskCost, maxToolBudgets } = ceilings;
  const tools =
    maxToolBudgets !== undefined && Object.keys(maxToolBudgets).length > 0 ? maxToolBudgets : undefined;
  if (maxTaskToolCalls === undefined && maxTaskCost === undefined && tools === undefined) return undefined;
  return {
    ...(maxTaskToolCalls === undefined ? {} : { maxCalls: maxTaskToolCalls }),
    ...(maxTaskCost === undefined ? {} : { maxCost: maxTaskCost }),
    ...(tools === undefined ? {} : { tools }),
  };
}

/** Refuses budgets that ask for more than a ceiling; a budget not asked for is the ceiling's (a run applies it). */
function checkBudgetCeilings(value: unknown, ceilings: BudgetCeilings): void {
  const budgets = checkTaskBudgets(value);
  if (budgets === null) return;
  const field = 'tool_constraints.budgets';
  const over = (v: number | undefined, ceiling: number | undefined): ceiling is number =>
    v !== undefined && ceiling !== undefined && v > ceiling;
  if (over(budgets.maxCalls, ceilings.maxCalls)) above(`${field}.max_calls`, ceilings.maxCalls, '');
  if (over(budgets.maxCost, ceilings.maxCost)) above(`${field}.max_cost`, ceilings.maxCost, '');
  for (const [name, asked] of Object.entries(budgets.tools ?? {})) {
    const ceiling = ceilings.tools?.[name];
    const at = `${field}.tools[${JSON.stringify(name)}]`;
    if (over(asked.maxCalls, ceiling?.maxCalls)) above(`${at}.max_calls`, ceiling.maxCalls, '');
    if (over(asked.maxWallSeconds, ceiling?.maxWallSeconds)) {
      above(`${at}.max_wall_seconds`, ceiling.maxWallSeconds, ' s');
    }
  }
}

/** What a task's program may weigh when no ceiling is given: 1 MiB (the sandbox's own `sourceBytes`). */
export const DEFAULT_MAX_CODE_BYTES = 1024 * 1024;
/** What a task's metadata may weigh (as JSON) when no ceiling is given: 64 KiB. */
export const DEFAULT_MAX_METADATA_BYTES = 64 * 1024;

function above(field: string, ceiling: number, unit: string): never {
  throw new CodecallError(
    'INVALID_ARGUMENT',
    `${field} must be at most ${ceiling}${unit} (the service's ceiling)`,
    {
      details: { field, ceiling },
    },
  );
}

function tooLarge(field: string, bytes: number, ceiling: number): never {
  throw new CodecallError(
    'PAYLOAD_TOO_LARGE',
    `${field} is ${bytes} bytes; it must be at most ${ceiling} bytes (the service's ceiling)`,
    { details: { field, bytes, ceiling } },
  );
}

/**
 * Refuses a task whose program (`code`, `instruction`) or `metadata` (as JSON) is over its bound, with
 * PAYLOAD_TOO_LARGE naming the field, its size and the bound. Every path that creates a task (submit, a batch,
 * anything later) goes through checkCeilings, so none stores a task of unbounded size: a task's row is read by
 * every list and stream of its tenant.
 */
export function checkSubmissionSizes(input: SubmitInput, ceilings: LimitCeilings): void {
  const maxCode = ceilings.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  for (const field of ['code', 'instruction'] as const) {
    const text = input[field];
    // Cheap first: a string of n UTF-16 units is at least n and at most 3n UTF-8 bytes.
    if (typeof text !== 'string' || text.length * 3 <= maxCode) continue;
    const bytes = Buffer.byteLength(text);
    if (bytes > maxCode) tooLarge(field, bytes, maxCode);
  }
  const maxMetadata = ceilings.maxMetadataBytes ?? DEFAULT_MAX_METADATA_BYTES;
  if (input.metadata !== undefined && input.metadata !== null) {
    // Not a JSON value at all is for toTaskInput to refuse (INVALID_ARGUMENT); only its size is checked here.
    let text: string | undefined;
    try {
      text = JSON.stringify(input.metadata);
    } catch {
      text = undefined;
    }
    const bytes = text === undefined ? 0 : Buffer.byteLength(text);
    if (bytes > maxMetadata) tooLarge('metadata', bytes, maxMetadata);
  }
}

/**
 * Refuses a submission that asks for more than a ceiling (or whose program or metadata is over its size bound);
 * `now` is when it is submitted (for the deadline).
 */
export function checkCeilings(input: SubmitInput, ceilings: LimitCeilings, now: number): void {
  checkSubmissionSizes(input, ceilings);
  const tenant = input.tenant ?? 'default';
  const policy = networkPolicyFor(ceilings.networkPolicies, tenant);
  const access = policy === undefined ? false : checkNetworkAccess(input.constraints?.networkAccess);
  if (policy !== undefined && access !== false) checkTenantNetwork(access, policy, tenant);
  const budgetCeilings = budgetCeilingsFor(budgetCeilingsOf(ceilings), ceilings.tenantBudgetCeilings, tenant);
  if (budgetCeilings !== undefined) checkBudgetCeilings(input.constraints?.budgets, budgetCeilings);
  const l = input.limits;
  const over = (v: number | undefined, ceiling: number | undefined, scale: number): ceiling is number =>
    typeof v === 'number' && ceiling !== undefined && v > ceiling * scale;
  if (over(l?.timeoutMs, ceilings.maxTimeoutSeconds, 1000)) {
    above('tool_constraints.timeout_seconds', ceilings.maxTimeoutSeconds, ' s');
  }
  if (over(l?.cpuMs, ceilings.maxCpuSeconds, 1000))
    above('tool_constraints.cpu_seconds', ceilings.maxCpuSeconds, ' s');
  if (over(l?.memoryBytes, ceilings.maxMemoryMb, 1024 * 1024)) {
    above('tool_constraints.max_memory_mb', ceilings.maxMemoryMb, ' MiB');
  }
  if (over(input.priority, ceilings.maxPriority, 1)) above('priority', ceilings.maxPriority, '');
  if (over(input.maxRetries, ceilings.maxRetries, 1)) above('max_retries', ceilings.maxRetries, '');
  // Relative (deadline_seconds) exactly; absolute from the runtime's clock, read after the caller's.
  const ahead = input.deadlineAt === undefined ? undefined : input.deadlineAt - now;
  if (
    over(input.deadlineSeconds, ceilings.maxDeadlineSeconds, 1) ||
    over(ahead, ceilings.maxDeadlineSeconds, 1000)
  ) {
    above('deadline_seconds', ceilings.maxDeadlineSeconds, ' s');
  }
}
