import { tighterBudget } from './tool-budgets.ts';
import type { TaskBudgets, ToolBudget } from './budget-types.ts';
import { smaller } from './wire-form.ts';

/**
 * The operator's ceilings on tool budgets (ADR 0044): the most `max_calls` and `max_cost` a task may ask for, and
 * per tool the most `max_calls` and `max_wall_seconds`. A task asking for more is refused at submit
 * (durable/limit-ceilings.ts); a task asking for nothing gets the ceiling itself, as it gets the operator's
 * `egressMaxRequests`: a ceiling a task could escape by not asking would bound nothing.
 */
export type BudgetCeilings = TaskBudgets;

/**
 * The budgets a task runs with under the operator's ceilings, each the smaller of the task's and the ceiling's
 * (the ceiling where the task sets none); undefined when neither sets any. Applied at every run, so a ceiling
 * lowered later holds for tasks already stored, and a task stored before there was one.
 */
export function ceiledBudgets(
  task: TaskBudgets | undefined,
  ceilings: BudgetCeilings | undefined,
): TaskBudgets | undefined {
  if (ceilings === undefined) return task;
  const maxCalls = smaller(task?.maxCalls, ceilings.maxCalls);
  const maxCost = smaller(task?.maxCost, ceilings.maxCost);
  const tools: Record<string, ToolBudget> = {};
  for (const name of new Set([...Object.keys(task?.tools ?? {}), ...Object.keys(ceilings.tools ?? {})])) {
    const budget = tighterBudget(ceilings.tools?.[name], task?.tools?.[name]);
    if (budget !== undefined) tools[name] = budget;
  }
  const out: { maxCalls?: number; maxCost?: number; tools?: Record<string, ToolBudget> } = {};
  if (maxCalls !== undefined) out.maxCalls = maxCalls;
  if (maxCost !== undefined) out.maxCost = maxCost;
  if (Object.keys(tools).length > 0) out.tools = tools;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Each tenant's own budget ceilings (`*`: the tenants not named), over the operator's global ones. */
export type TenantBudgetCeilings = Readonly<Record<string, BudgetCeilings>>;

/**
 * The ceilings of `tenant`'s tasks: its own entry (else the `*` one), field by field over the global ceilings, so
 * an operator can give one tenant more or less than the rest (a tool's entry replaces the global one of that tool).
 * Undefined when neither sets any.
 */
export function budgetCeilingsFor(
  global: BudgetCeilings | undefined,
  tenants: TenantBudgetCeilings | undefined,
  tenant: string,
): BudgetCeilings | undefined {
  const own =
    tenants === undefined
      ? undefined
      : Object.hasOwn(tenants, tenant)
        ? tenants[tenant]
        : Object.hasOwn(tenants, '*')
          ? tenants['*']
          : undefined;
  if (own === undefined) return global;
  const maxCalls = own.maxCalls ?? global?.maxCalls;
  const maxCost = own.maxCost ?? global?.maxCost;
  const tools = { ...global?.tools, ...own.tools };
  const out: { maxCalls?: number; maxCost?: number; tools?: Record<string, ToolBudget> } = {};
  if (maxCalls !== undefined) out.maxCalls = maxCalls;
  if (maxCost !== undefined) out.maxCost = maxCost;
  if (Object.keys(tools).length > 0) out.tools = tools;
  return Object.keys(out).length > 0 ? out : undefined;
}
