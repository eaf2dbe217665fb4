import type { CarryOver } from './carry-over.ts';
import type { JournalEntry, JournalEntryInput } from './journal.ts';
import type { ExecutionResult, GuestLanguage, LogEntry } from './sandbox.ts';
import type { ToolLimitsOfCall } from './tenant-limits.ts';
import type { ToolDefinition } from './tool.ts';
import type { InstructionTaskInput, TaskRecord } from './task.ts';

/** One journaled execution of a program inside an agent's task (one step). */
export interface ProgramRun {
  readonly code: string;
  /** The program's language; the task's driver must speak it. */
  readonly language: GuestLanguage;
  /** This execution's earlier tool entries, in journal order, with the call ids the driver gives. */
  readonly recorded: readonly JournalEntryInput[];
  /** Journals what the execution writes (the agent maps call ids to the task's). */
  readonly append: (entries: readonly JournalEntryInput[]) => Promise<void | readonly JournalEntryInput[]>;
  /** Prefix of the idempotency keys of its tool calls (`task:step`). */
  readonly keyPrefix: string;
  /** Calls earlier attempts completed, for this revised program to take over (ADR 0034). */
  readonly carry?: CarryOver;
  /** How the task's journal names the execution's call ids (`append` maps them so); absent: as the driver does. */
  readonly journalId?: (callId: string) => string;
}

/** What the runner gives an agent for one run of an instruction task (it holds the lease meanwhile). */
export interface AgentRunContext {
  readonly task: TaskRecord & { readonly input: InstructionTaskInput };
  /** The journal as it was when the task was claimed. */
  readonly journal: readonly JournalEntry[];
  /** Appends to the task's journal (fenced by the lease; committed when it resolves). */
  readonly append: (entries: readonly JournalEntryInput[]) => Promise<void>;
  /** Runs a program on the task's sandbox through the journal, with the task's tools, limits and approvals. */
  readonly runProgram: (run: ProgramRun) => Promise<ExecutionResult>;
  /** The guest's console output as it happens (not replayed lines). */
  readonly onLog?: (entry: LogEntry) => void;
  /** Aborted by pause, cancel, shutdown and the deadline; its reason's `code` says which. */
  readonly signal: AbortSignal;
  readonly clock: () => number;
  /**
   * The operator's rate limit and quota on this task's tenant's calls of a tool (`namespace.name`; ADR 0045), for
   * the prompt to say; absent or null: none. The runtime enforces them whatever the prompt says.
   */
  readonly limitsOf?: (tool: string) => ToolLimitsOfCall | null;
  /**
   * The tools this task's programs can call: the set its journaled manifest names (a task keeps the tools it began
   * with when a server's list changes, ADR 0047), the latest set for a task not begun. The prompt lists these;
   * absent: the agent's own list.
   */
  readonly tools?: readonly ToolDefinition[];
}

/**
 * Runs instruction tasks: asks a model, journals every request and reply before acting on it, runs the code. The
 * result is settled like a program's: `succeeded` with the answer, a pause code to pause, any other failure fails.
 */
export interface TaskAgent {
  run(context: AgentRunContext): Promise<ExecutionResult>;
  /**
   * Checks an instruction task's `answerSchema` when it is submitted (the runtime calls it before storing the
   * task): a schema the agent could not hold an answer to throws INVALID_ARGUMENT naming `answer_schema`.
   */
  checkAnswerSchema?(schema: Readonly<Record<string, unknown>>): void;
}

/** A program lowered to JavaScript by the TypeScript compiler, or the compiler's first error (1-based). */
export type LoweredTypeScript =
  | {
      readonly ok: true;
      readonly code: string;
      /** The line of the wrapped program a line of `code` came from (1-based), when the compiler says. */
      sourceLine(line: number): number | undefined;
    }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number };

/**
 * What type stripping cannot do for an agent's TypeScript blocks (a `namespace`, which it drops, and decorators,
 * which it keeps): the sandbox's TypeScript compiler, given to the agent by its composition root.
 */
export interface TypeScriptLowering {
  /** Whether `program` declares a namespace (a cheap test on the text). */
  needs(program: string): boolean;
  /** Lowers a program wrapped as the body of an async arrow function, keeping that wrapper. */
  lower(wrapped: string): LoweredTypeScript;
}
