import type { RevisedCallPolicy } from './call-origin.ts';
import type { ToolApproval } from './approval-rules.ts';
import type { JsonSchema } from './json-schema.ts';
import type { ToolBudget, ToolCost } from './budget-types.ts';

/**
 * What a tool does to the world, which decides what recovery may do with a call whose outcome was lost:
 * `read` and `idempotent` are re-run, `keyed` is re-run with the same idempotency key, `unsafe` needs a human.
 */
export type ToolEffect = 'read' | 'idempotent' | 'keyed' | 'unsafe';

export const TOOL_EFFECTS: readonly ToolEffect[] = ['read', 'idempotent', 'keyed', 'unsafe'];

export interface ToolContext {
  /**
   * Aborted when the call must stop: a cancel, the deadline, a limit, a lost lease, the execution's end. A pause
   * (for approval, by request, for shutdown) lets a started call finish and journal its outcome.
   */
  readonly signal: AbortSignal;
  /** Identifies this call within its execution (`call-N`, N in issue order). */
  readonly callId: string;
  /** Stable key for `keyed` tools; set by the durable layer. */
  readonly idempotencyKey?: string;
  /**
   * The fencing token of the worker's lease on the task (durable runs): it grows with every claim, so an external
   * system that remembers the highest token it saw per idempotency key can refuse a stale worker's late write.
   */
  readonly fencingToken?: number;
}

export type ApprovalPolicy = boolean | ((args: unknown) => boolean);

/** A tool as the host holds it: schemas in JSON Schema form, an executor, and its declared effect. */
export interface ToolDefinition {
  /** The global object the guest reaches it through (default `tools`). */
  readonly namespace: string;
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly effect: ToolEffect;
  readonly requiresApproval: ApprovalPolicy;
  /** Who may decide its approvals and when a request expires (ADR 0031); the operator's config may tighten it. */
  readonly approval?: ToolApproval;
  /**
   * What a revised program does when it calls this tool with other arguments than an earlier attempt's
   * completed call (ADR 0034); absent: `pause` for `keyed` and `unsafe` tools, `run` for the others.
   */
  readonly revisedCall?: RevisedCallPolicy;
  /** What a call costs against a task's `max_cost` (ADR 0044); absent: DEFAULT_CALL_COST. */
  readonly cost?: ToolCost;
  /** The tool's budget in every task; a task's `budgets.tools` may only tighten it (ADR 0044). */
  readonly budget?: ToolBudget;
  execute(args: unknown, ctx: ToolContext): unknown;
}

/** The part of a tool the sandbox needs: where the guest finds it. */
export interface GuestToolBinding {
  readonly namespace: string;
  readonly name: string;
  /**
   * When set, the guest function takes positional arguments, packed into one object by these names
   * (`input.wait(name, options)` -> `{ name, options }`); otherwise it takes one argument object.
   */
  readonly params?: readonly string[];
}
