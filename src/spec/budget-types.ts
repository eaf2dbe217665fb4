// The types of tool budgets (ADR 0044), apart from tool-budgets.ts so the journal's and the tools' types can name
// them without an import cycle.

/** A tool's budget in one task: its calls, and the time they took (outcome minus start, completed calls). */
export interface ToolBudget {
  readonly maxCalls?: number;
  readonly maxWallSeconds?: number;
}

/**
 * What one call of a tool costs against a task's `max_cost`: a number, or one computed from the call's arguments
 * (as the program passed them, before they are validated). A tool that declares none costs DEFAULT_CALL_COST.
 */
export type ToolCost = number | ((args: unknown) => number);

/** A task's budgets (`tool_constraints.budgets` on the wire, snake_case there). */
export interface TaskBudgets {
  /** Calls of all tools together. */
  readonly maxCalls?: number;
  /** The sum of the calls' costs. */
  readonly maxCost?: number;
  /** Per tool (`namespace.name`): only tightens what the tool declares (the smaller of each wins). */
  readonly tools?: Readonly<Record<string, ToolBudget>>;
}

/** Which budget a refused call would have passed (`TOOL_BUDGET_EXCEEDED`'s `details.budget`). */
export type BudgetName = 'max_calls' | 'max_cost' | 'tool_max_calls' | 'tool_max_wall_seconds';

export const BUDGET_NAMES: readonly BudgetName[] = [
  'max_calls',
  'max_cost',
  'tool_max_calls',
  'tool_max_wall_seconds',
];

/** Which of the operator's per-tenant limits refused a call (ADR 0045): its rate limit or its quota. */
export type TenantLimitName = 'tenant_rate' | 'tenant_quota';

/** What a journaled intent's `over_budget` may name: a task's budget (ADR 0044) or a tenant's limit (ADR 0045). */
export type RefusalName = BudgetName | TenantLimitName;

export const REFUSAL_NAMES: readonly RefusalName[] = [...BUDGET_NAMES, 'tenant_rate', 'tenant_quota'];
