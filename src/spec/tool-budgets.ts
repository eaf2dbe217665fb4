import { CodecallError } from '../errors/index.ts';
import { isRecord } from './is-record.ts';
import { QUALIFIED_TOOL_NAME } from './tool-names.ts';
import { invertedNames, renamedKeys, smaller } from './wire-form.ts';
import type { TaskBudgets, ToolBudget, ToolCost } from './budget-types.ts';
import type { JournalEntryData } from './journal-entry.ts';
import type { JournalEntryInput } from './journal.ts';

export type {
  BudgetName,
  RefusalName,
  TaskBudgets,
  TenantLimitName,
  ToolBudget,
  ToolCost,
} from './budget-types.ts';
export { BUDGET_NAMES, REFUSAL_NAMES } from './budget-types.ts';

/**
 * Per-task tool budgets (issue 21, ADR 0044). A tool declares its own (`defineTool({ budget })`, for every task);
 * a task may only tighten them and add budgets over all its calls (`tool_constraints.budgets`). What a task used
 * is folded from its journal (`foldBudgetUsage`), so a replay never counts a call twice and a resumed task has
 * what it had left.
 */

/** The cost of a call of a tool that declares none (and of an intent journaled without one). */
export const DEFAULT_CALL_COST = 1;

/** The most tools one task's budgets may name. */
export const MAX_BUDGET_TOOLS = 1000;

const BUDGET_KEYS = ['max_calls', 'max_cost', 'tools'] as const;
const TOOL_BUDGET_KEYS = ['max_calls', 'max_wall_seconds'] as const;

/** The wire's budgets of one tool (snake_case). */
export interface ToolBudgetWire {
  readonly max_calls?: number;
  readonly max_wall_seconds?: number;
}

/** A task's budgets as the wire (and the task's view) writes them. */
export interface TaskBudgetsWire {
  readonly max_calls?: number;
  readonly max_cost?: number;
  readonly tools?: Readonly<Record<string, ToolBudgetWire>>;
}

function invalid(field: string, message: string): never {
  throw new CodecallError('INVALID_ARGUMENT', `${field} ${message}`, { details: { field } });
}

/** A count of calls: a whole number, 0 or more. */
function calls(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    invalid(field, 'must be an integer of 0 or more');
  return v;
}

/** An amount (cost, seconds): a finite number, 0 or more. */
function amount(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) invalid(field, 'must be a number of 0 or more');
  return v;
}

function unknownKeys(field: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) invalid(field, `has an unknown key "${key}" (known: ${known.join(', ')})`);
  }
}

/**
 * A task's `tool_constraints.budgets` as the wire gives it (snake_case), checked: null when it sets none.
 * INVALID_ARGUMENT naming the wire's field (`tool_constraints.budgets.tools["ns.name"].max_calls`) otherwise.
 */
export function parseTaskBudgets(value: unknown, field = 'tool_constraints.budgets'): TaskBudgets | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) invalid(field, 'must be an object { max_calls, max_cost, tools }');
  unknownKeys(field, value, BUDGET_KEYS);
  const out: { maxCalls?: number; maxCost?: number; tools?: Record<string, ToolBudget> } = {};
  if (value.max_calls !== undefined) out.maxCalls = calls(`${field}.max_calls`, value.max_calls);
  if (value.max_cost !== undefined) out.maxCost = amount(`${field}.max_cost`, value.max_cost);
  if (value.tools !== undefined) {
    const at = `${field}.tools`;
    if (!isRecord(value.tools))
      invalid(at, 'must be an object of "namespace.name": { max_calls, max_wall_seconds }');
    const entries = Object.entries(value.tools);
    if (entries.length > MAX_BUDGET_TOOLS) invalid(at, `may name at most ${MAX_BUDGET_TOOLS} tools`);
    const tools: Record<string, ToolBudget> = {};
    for (const [name, raw] of entries) {
      const here = `${at}[${JSON.stringify(name)}]`;
      if (!QUALIFIED_TOOL_NAME.test(name))
        invalid(here, 'must be named "namespace.name", as the program calls the tool');
      if (name.startsWith('egress.'))
        invalid(here, "is fetch's: network_access.max_requests bounds its requests");
      if (name.startsWith('input.')) invalid(here, 'is not a tool call: input.wait has no budget');
      if (!isRecord(raw)) invalid(here, 'must be an object { max_calls, max_wall_seconds }');
      unknownKeys(here, raw, TOOL_BUDGET_KEYS);
      const budget: { maxCalls?: number; maxWallSeconds?: number } = {};
      if (raw.max_calls !== undefined) budget.maxCalls = calls(`${here}.max_calls`, raw.max_calls);
      if (raw.max_wall_seconds !== undefined) {
        budget.maxWallSeconds = amount(`${here}.max_wall_seconds`, raw.max_wall_seconds);
      }
      if (Object.keys(budget).length > 0) tools[name] = budget;
    }
    if (Object.keys(tools).length > 0) out.tools = tools;
  }
  return Object.keys(out).length > 0 ? out : null;
}

const TO_WIRE: Readonly<Record<string, string>> = {
  maxCalls: 'max_calls',
  maxCost: 'max_cost',
  maxWallSeconds: 'max_wall_seconds',
};
const FROM_WIRE = invertedNames(TO_WIRE);

/** Renames the keys of budgets (and of each tool's), leaving anything else as it is for the check to refuse. */
function renamed(value: unknown, names: Readonly<Record<string, string>>): unknown {
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'tools' && isRecord(v)) {
      out.tools = Object.fromEntries(Object.entries(v).map(([name, b]) => [name, renamedKeys(b, names)]));
    } else out[names[k] ?? k] = v;
  }
  return out;
}

/**
 * A task's budgets in the runtime's form (camelCase) checked as the wire's are (`parseTaskBudgets`): null when
 * they set none. Throws INVALID_ARGUMENT naming the wire's field.
 */
export function checkTaskBudgets(value: unknown, field = 'tool_constraints.budgets'): TaskBudgets | null {
  return parseTaskBudgets(renamed(value, TO_WIRE), field);
}

/** The wire's snake_case budgets in the runtime's form, renamed only: `checkTaskBudgets` checks them. */
export function taskBudgetsFromWire(value: unknown): TaskBudgets {
  return renamed(value, FROM_WIRE) as TaskBudgets;
}

/** Checked budgets as the wire (and a task's view) writes them. */
export function taskBudgetsToWire(budgets: TaskBudgets): TaskBudgetsWire {
  return renamed(budgets, TO_WIRE) as TaskBudgetsWire;
}

/**
 * A tool's declared `budget` (`defineTool`), checked: INVALID_ARGUMENT naming `budget.maxCalls` or
 * `budget.maxWallSeconds` otherwise.
 */
export function checkToolBudget(tool: string, value: unknown): ToolBudget {
  const field = (key: string): string => `budget${key === '' ? '' : `.${key}`}`;
  const bad = (key: string, message: string): never => {
    throw new CodecallError('INVALID_ARGUMENT', `tool ${tool}: ${field(key)} ${message}`, {
      details: { field: field(key) },
    });
  };
  if (!isRecord(value)) return bad('', 'must be an object { maxCalls, maxWallSeconds }');
  for (const key of Object.keys(value)) {
    if (key !== 'maxCalls' && key !== 'maxWallSeconds') bad(key, 'is not a field (maxCalls, maxWallSeconds)');
  }
  const { maxCalls, maxWallSeconds } = value;
  if (
    maxCalls !== undefined &&
    !(typeof maxCalls === 'number' && Number.isSafeInteger(maxCalls) && maxCalls >= 0)
  )
    bad('maxCalls', 'must be an integer of 0 or more');
  if (
    maxWallSeconds !== undefined &&
    !(typeof maxWallSeconds === 'number' && Number.isFinite(maxWallSeconds) && maxWallSeconds >= 0)
  )
    bad('maxWallSeconds', 'must be a number of seconds, 0 or more');
  return Object.freeze({
    ...(maxCalls === undefined ? {} : { maxCalls: maxCalls as number }),
    ...(maxWallSeconds === undefined ? {} : { maxWallSeconds: maxWallSeconds as number }),
  });
}

/** A tool's declared `cost` (`defineTool`), checked: a number of 0 or more, or a function of the arguments. */
export function checkToolCost(tool: string, value: unknown): ToolCost {
  if (typeof value === 'function') return value as (args: unknown) => number;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  throw new CodecallError(
    'INVALID_ARGUMENT',
    `tool ${tool}: cost must be a number of 0 or more, or a function of the arguments that returns one`,
    { details: { field: 'cost' } },
  );
}

/** A tool's budget in a task: the smaller of each of the tool's own and the task's; undefined when neither sets one. */
export function tighterBudget(declared?: ToolBudget, task?: ToolBudget): ToolBudget | undefined {
  const maxCalls = smaller(declared?.maxCalls, task?.maxCalls);
  const maxWallSeconds = smaller(declared?.maxWallSeconds, task?.maxWallSeconds);
  if (maxCalls === undefined && maxWallSeconds === undefined) return undefined;
  return {
    ...(maxCalls === undefined ? {} : { maxCalls }),
    ...(maxWallSeconds === undefined ? {} : { maxWallSeconds }),
  };
}

/** One tool's usage in a task: its counted calls, and the milliseconds its completed ones took. */
export interface ToolUsage {
  calls: number;
  wallMs: number;
}

/** A counted call without an outcome yet: its tool, and when it (last) started; null while it waits for a human. */
export interface OpenCall {
  readonly tool: string;
  at: number | null;
}

/** What a task used of its budgets, folded from its journal (`foldBudgetUsage`), changed in place. */
export interface BudgetUsage {
  calls: number;
  cost: number;
  /** By tool (`namespace.name`). */
  readonly tools: Map<string, ToolUsage>;
  /** By the journal's call id. */
  readonly open: Map<string, OpenCall>;
}

/** A BudgetUsage as JSON holds it (a journal summary's `usage`). */
export interface StoredBudgetUsage {
  readonly calls: number;
  readonly cost: number;
  readonly tools: Readonly<Record<string, Readonly<ToolUsage>>>;
  readonly open: Readonly<Record<string, Readonly<OpenCall>>>;
}

export function emptyBudgetUsage(): BudgetUsage {
  return { calls: 0, cost: 0, tools: new Map(), open: new Map() };
}

/** The usage a stored one holds, to fold into (the stored one is left as it is). */
export function budgetUsageOf(stored: StoredBudgetUsage): BudgetUsage {
  const tools = new Map<string, ToolUsage>();
  for (const [name, t] of Object.entries(stored.tools)) tools.set(name, { calls: t.calls, wallMs: t.wallMs });
  const open = new Map<string, OpenCall>();
  for (const [id, c] of Object.entries(stored.open)) open.set(id, { tool: c.tool, at: c.at });
  return { calls: stored.calls, cost: stored.cost, tools, open };
}

/** The usage as JSON holds it. */
export function storedBudgetUsage(u: BudgetUsage): StoredBudgetUsage {
  const tools: Record<string, ToolUsage> = {};
  for (const [name, t] of u.tools) tools[name] = { calls: t.calls, wallMs: t.wallMs };
  const open: Record<string, OpenCall> = {};
  for (const [id, c] of u.open) open[id] = { tool: c.tool, at: c.at };
  return { calls: u.calls, cost: u.cost, tools, open };
}

/** How the journal's stand-in for arguments over their bound (ADR 0027, durable/call-size-limits.ts) starts. */
export const OVERSIZE_STAND_IN_PREFIX = '{"codecall_too_large":';

/**
 * Whether calls in a namespace are calls of the task's tools, which budgets (ADR 0044) and a tenant's limits
 * (ADR 0045) count: not `input.wait`, not fetch's egress calls (`network_access.max_requests` bounds those).
 */
export function isTaskToolNamespace(namespace: string): boolean {
  return namespace !== 'input' && namespace !== 'egress';
}

/**
 * Whether an intent counts against budgets: a tool call that was not refused before it ran (by a budget, or for
 * the size of its arguments) nor taken over from an earlier attempt (ADR 0034). Timers, `input.wait` and fetch's
 * requests (`network_access.max_requests` bounds those) are not tool calls of the task's tools.
 */
export function countsAgainstBudgets(intent: JournalEntryData['tool_intent']): boolean {
  const { tool } = intent;
  return (
    intent.over_budget === undefined &&
    intent.carried_from === undefined &&
    tool !== 'timer' &&
    isTaskToolNamespace(tool.slice(0, tool.indexOf('.'))) &&
    !intent.args.startsWith(OVERSIZE_STAND_IN_PREFIX)
  );
}

/** Whether the entry can change budget usage (the rest need not be folded). */
export function touchesBudgets(entry: JournalEntryInput): boolean {
  switch (entry.type) {
    case 'tool_intent':
    case 'tool_outcome':
    case 'approval_request':
    case 'attention_decision':
      return true;
    case 'control':
      return (
        entry.data.action === 'approved_call_started' ||
        entry.data.action === 'retry_started' ||
        entry.data.action === 'not_started' ||
        entry.data.action === 'revision_held'
      );
    default:
      return false;
  }
}

/**
 * Folds one journal entry, journaled at `at` (epoch ms; null when unknown), into `u` (changed in place). A counted
 * intent adds a call and its cost (`cost`, else DEFAULT_CALL_COST) and opens the call; its outcome adds the time
 * since the call (last) started to its tool's. A call starts at its intent, when approved, and when it runs again
 * after a human's retry; it waits (no time) from its approval request, a revision's hold, a human's decision or
 * an end before it started. A call lost in a crash and run again counts from its intent.
 */
export function foldBudgetUsage(u: BudgetUsage, entry: JournalEntryInput, at: number | null): void {
  switch (entry.type) {
    case 'tool_intent': {
      const d = entry.data;
      if (!countsAgainstBudgets(d) || u.open.has(d.call_id)) return;
      u.calls += 1;
      u.cost += d.cost ?? DEFAULT_CALL_COST;
      const tool = u.tools.get(d.tool);
      if (tool) tool.calls += 1;
      else u.tools.set(d.tool, { calls: 1, wallMs: 0 });
      // A read's intent, journaled with its outcome, says when its tool started (ADR 0047, amended 2026-12-07).
      u.open.set(d.call_id, { tool: d.tool, at: d.started_at ?? at });
      return;
    }
    case 'tool_outcome': {
      const open = u.open.get(entry.data.call_id);
      if (!open) return;
      u.open.delete(entry.data.call_id);
      const tool = u.tools.get(open.tool);
      if (tool && open.at !== null && at !== null) tool.wallMs += Math.max(0, at - open.at);
      return;
    }
    case 'approval_request':
    case 'attention_decision':
      waits(u, entry.data.call_id);
      return;
    case 'control': {
      const c = entry.data;
      if (c.action === 'approved_call_started' || c.action === 'retry_started') {
        const open = u.open.get(c.call_id);
        if (open) open.at = at;
      } else if (c.action === 'not_started' || c.action === 'revision_held') waits(u, c.call_id);
      return;
    }
    default:
      return;
  }
}

function waits(u: BudgetUsage, callId: string): void {
  const open = u.open.get(callId);
  if (open) open.at = null;
}

/** Epoch ms of a stored entry's `createdAt`, null when it is not a time. */
export function entryTime(createdAt: string): number | null {
  const t = Date.parse(createdAt);
  return Number.isFinite(t) ? t : null;
}

function isCount(v: unknown): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isAmount(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** Whether a stored value (a journal summary's) has the shape of a StoredBudgetUsage. */
export function isStoredBudgetUsage(v: unknown): v is StoredBudgetUsage {
  return (
    isRecord(v) &&
    isCount(v.calls) &&
    isAmount(v.cost) &&
    isRecord(v.tools) &&
    Object.values(v.tools).every((t) => isRecord(t) && isCount(t.calls) && isAmount(t.wallMs)) &&
    isRecord(v.open) &&
    Object.values(v.open).every(
      (c) =>
        isRecord(c) &&
        typeof c.tool === 'string' &&
        (c.at === null || (typeof c.at === 'number' && Number.isFinite(c.at))),
    )
  );
}
