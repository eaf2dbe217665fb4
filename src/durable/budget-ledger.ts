import { failure } from '../errors/index.ts';
import {
  ceiledBudgets,
  DEFAULT_CALL_COST,
  emptyBudgetUsage,
  entryTime,
  foldBudgetUsage,
  isTaskToolNamespace,
  tighterBudget,
  touchesBudgets,
} from '../spec/index.ts';
import type {
  BudgetCeilings,
  BudgetName,
  BudgetUsage,
  GuestToolBinding,
  HostCall,
  JournalEntry,
  JournalEntryInput,
  RefusalName,
  SerializedError,
  TaskBudgets,
  ToolBudget,
  ToolCost,
} from '../spec/index.ts';

/** What the ledger reads of the tools: each one's declared budget and cost (a ToolRegistry fits). */
export interface BudgetTools {
  readonly bindings: readonly GuestToolBinding[];
  get(
    namespace: string,
    name: string,
  ): { readonly budget?: ToolBudget; readonly cost?: ToolCost } | undefined;
}

/** What becomes of a new call (`BudgetLedger.admit`), decided before its intent is journaled. */
export type Admission =
  /** It runs; `cost` goes into its intent (absent: DEFAULT_CALL_COST). */
  | { readonly kind: 'run'; readonly cost?: number }
  /**
   * Past `budget` (a task's, or its tenant's limit, ADR 0045): it fails with `error`, never runs, and its intent
   * says so (not counted).
   */
  | { readonly kind: 'refuse'; readonly budget: RefusalName; readonly error: SerializedError }
  /** Its cost could not be computed (the tool's cost function threw): it fails, never runs, a call costing 0. */
  | { readonly kind: 'fail'; readonly error: SerializedError };

/** The admission of a call that simply runs (one object for all of them). */
export const RUN: Admission = Object.freeze({ kind: 'run' });

/** Cost sums are of floating point numbers: 0.1 + 0.2 must fit a budget of 0.3. */
const COST_SLACK = 1e-9;

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * A task's budgets and what it used of them, for one run: folded from its journal when the run starts, then from
 * every entry the run's JournalingHosts journal, as they journal it (an intent counts the moment it is decided, so
 * the calls of one `Promise.all` are admitted in call order). The only decision it takes is `admit`; what it
 * counts is `foldBudgetUsage`'s, the same fold a task's view reads (ADR 0044).
 */
export class BudgetLedger {
  readonly usage: BudgetUsage = emptyBudgetUsage();
  private readonly budgets: TaskBudgets;
  /** Each tool's budget in this task (the smaller of the declared and the task's) and cost, by `namespace.name`. */
  private readonly perTool = new Map<string, ToolTerms>();

  private constructor(
    budgets: TaskBudgets | undefined,
    private readonly tools: BudgetTools,
    journal: readonly JournalEntry[],
  ) {
    this.budgets = budgets ?? {};
    for (const entry of journal) {
      if (touchesBudgets(entry)) foldBudgetUsage(this.usage, entry, entryTime(entry.createdAt));
    }
  }

  /**
   * The ledger of a task's run, or null when nothing bounds its calls: the task sets no budgets, the operator no
   * ceilings, and none of the tools declares one (its calls then cost nothing to check). The task's budgets are
   * held to the operator's `ceilings` (the ceiling where the task sets none).
   */
  static of(
    asked: TaskBudgets | undefined,
    tools: BudgetTools,
    journal: readonly JournalEntry[],
    ceilings?: BudgetCeilings,
  ): BudgetLedger | null {
    const budgets = ceiledBudgets(asked, ceilings);
    const bounded =
      budgets !== undefined ||
      tools.bindings.some((b) => tools.get(b.namespace, b.name)?.budget !== undefined);
    return bounded ? new BudgetLedger(budgets, tools, journal) : null;
  }

  /** Whether a new call may run, given what the task used; it counts once its intent is journaled (`journaled`). */
  admit(call: HostCall & { kind: 'tool' }): Admission {
    if (!isTaskToolNamespace(call.namespace)) return RUN;
    const tool = `${call.namespace}.${call.name}`;
    const usage = this.usage;
    const terms = this.termsOf(call.namespace, call.name, tool);
    const own = terms.budget;
    if (own !== null) {
      const used = usage.tools.get(tool);
      const calls = used?.calls ?? 0;
      if (own.maxCalls !== undefined && calls + 1 > own.maxCalls) {
        return refuse('tool_max_calls', tool, own.maxCalls, calls, () => {
          return `${tool} was not run: the task has made ${calls} of the ${own.maxCalls} calls of this tool its budget allows`;
        });
      }
      const wallMs = used?.wallMs ?? 0;
      if (own.maxWallSeconds !== undefined && wallMs >= own.maxWallSeconds * 1000) {
        const seconds = round(wallMs / 1000);
        return refuse('tool_max_wall_seconds', tool, own.maxWallSeconds, seconds, () => {
          return `${tool} was not run: the task's calls of this tool took ${seconds} s of the ${own.maxWallSeconds} s its budget allows`;
        });
      }
    }
    const { maxCalls, maxCost } = this.budgets;
    if (maxCalls !== undefined && usage.calls + 1 > maxCalls) {
      return refuse('max_calls', tool, maxCalls, usage.calls, () => {
        return `${tool} was not run: the task has made ${usage.calls} of the ${maxCalls} tool calls its budget allows`;
      });
    }
    if (maxCost === undefined) return RUN;
    const cost = costOf(terms.cost, call, tool);
    if (typeof cost !== 'number') return cost;
    if (usage.cost + cost > maxCost + COST_SLACK) {
      const used = round(usage.cost);
      return refuse(
        'max_cost',
        tool,
        maxCost,
        used,
        () =>
          `${tool} was not run: it costs ${cost}, and the task has used ${used} of the ${maxCost} its budget allows`,
        { cost },
      );
    }
    return cost === DEFAULT_CALL_COST ? RUN : { kind: 'run', cost };
  }

  /**
   * Folds entries a JournalingHost journals now, at `at` (epoch ms). `journalId` maps the execution's call ids to
   * the journal's (an agent's step prefixes them), so a call's outcome meets the intent the journal names.
   */
  journaled(entries: readonly JournalEntryInput[], at: number, journalId?: (callId: string) => string): void {
    for (const entry of entries) {
      if (!touchesBudgets(entry)) continue;
      foldBudgetUsage(this.usage, journalId ? withJournalId(entry, journalId) : entry, at);
    }
  }

  private termsOf(namespace: string, name: string, tool: string): ToolTerms {
    let terms = this.perTool.get(tool);
    if (terms === undefined) {
      const declared = this.tools.get(namespace, name);
      terms = {
        budget: tighterBudget(declared?.budget, this.budgets.tools?.[tool]) ?? null,
        cost: declared?.cost,
      };
      this.perTool.set(tool, terms);
    }
    return terms;
  }
}

/** A tool's budget in the task (null: none) and its declared cost. */
interface ToolTerms {
  readonly budget: ToolBudget | null;
  readonly cost: ToolCost | undefined;
}

/** The call's cost: the tool's number, or its function of the arguments; a failure when that throws. */
function costOf(
  declared: ToolCost | undefined,
  call: HostCall & { kind: 'tool' },
  tool: string,
): number | Admission {
  if (declared === undefined) return DEFAULT_CALL_COST;
  if (typeof declared === 'number') return declared;
  let cost: unknown;
  try {
    cost = declared(call.args);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { kind: 'fail', error: failure('TOOL_ERROR', `${tool}: its cost could not be computed: ${why}`) };
  }
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) {
    return {
      kind: 'fail',
      error: failure(
        'TOOL_ERROR',
        `${tool}: its cost function returned ${String(cost)}, not a number of 0 or more`,
      ),
    };
  }
  return cost;
}

function refuse(
  budget: BudgetName,
  tool: string,
  limit: number,
  used: number,
  message: () => string,
  more: Record<string, unknown> = {},
): Admission {
  return {
    kind: 'refuse',
    budget,
    error: failure('TOOL_BUDGET_EXCEEDED', message(), { budget, tool, limit, used, ...more }),
  };
}

/** The entry with its call id as the journal names it. */
function withJournalId(entry: JournalEntryInput, journalId: (callId: string) => string): JournalEntryInput {
  const data = entry.data as { readonly call_id?: unknown };
  if (typeof data.call_id !== 'string') return entry;
  return { type: entry.type, data: { ...entry.data, call_id: journalId(data.call_id) } } as JournalEntryInput;
}
