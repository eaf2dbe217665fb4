import type { RevisedCallPolicy } from './call-origin.ts';
import type { ToolApproval } from './approval-rules.ts';
import type { JsonSchema } from './json-schema.ts';
import type { ToolBudget, ToolCost } from './budget-types.ts';
import type { TraceContext } from './trace-context.ts';

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
  /**
   * Writes a line to the task's log: its live stream (`GET .../stream`, `codecall run`'s output) and the log the
   * run leaves in the task record, e.g. a long call's progress. Lines a tool logs are not replayed.
   */
  readonly log?: (message: string) => void;
  /**
   * Durable runs only (absent in a one-off run): asks a human for input in the middle of the call (an MCP
   * server's elicitation, ADR 0047). When the task's journal holds an answer to the same request (same name,
   * message and schema) of this call, resolves with it (a timeout, INPUT_TIMEOUT). Else the request is journaled,
   * the task pauses `awaiting_input`, and this rejects (AWAITING_INPUT): the tool stops its work; its outcome is
   * not journaled, and the call runs again with the answer at hand as its effect allows (an `unsafe` one after a
   * human's retry).
   */
  readonly requestInput?: (request: ToolInputRequest) => Promise<unknown>;
  /**
   * The W3C trace context of this call's span (`traceparent`, `tracestate`), when the task is traced or its
   * caller sent one: a tool that calls another service passes it on as headers to join the task's trace.
   */
  readonly traceContext?: TraceContext;
}

/** A tool's question to a human mid-call (`ToolContext.requestInput`). */
export interface ToolInputRequest {
  /** What `codecall tasks input ID NAME JSON` (and the API) answers it by, e.g. the tool's name. */
  readonly name: string;
  /** Shown to the human. */
  readonly message: string;
  /** The shape the answer should have. */
  readonly schema?: JsonSchema;
}

/**
 * How a tool says that its service could not be reached (`details.unreachable` of the error it throws): `not_sent`
 * (the request never left: a durable task waits and runs it again) or `in_doubt` (the connection ended while the
 * call ran: a durable task waits, and the call's effect decides whether it runs again). A one-off run's program
 * sees the error.
 */
export type ToolUnreachable = 'not_sent' | 'in_doubt';

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
