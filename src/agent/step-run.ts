import type {
  AgentRunContext,
  CarryOver,
  ExecutionResult,
  GuestLanguage,
  JournalEntryInput,
} from '../spec/index.ts';
import { callIdInStep, idempotencyScope } from '../spec/index.ts';
import { recordedFor, toJournalIds } from './agent-journal.ts';

/** The agent's view of its journal during a run: what the claim read plus what this run wrote. */
export class RunJournal {
  readonly entries: JournalEntryInput[];

  constructor(private readonly ctx: AgentRunContext) {
    this.entries = [...ctx.journal];
  }

  async append(entries: readonly JournalEntryInput[]): Promise<void> {
    await this.ctx.append(entries);
    this.entries.push(...entries);
  }

  /**
   * Runs one step's program through the journal: the earlier successful steps' tool outcomes (their code runs
   * again first) and the step's own are replayed, new calls are journaled under the step's call ids.
   */
  runStep(
    step: number,
    code: string,
    language: GuestLanguage,
    rerun: ReadonlySet<number>,
    carry: CarryOver | null = null,
  ) {
    return this.ctx
      .runProgram({
        code,
        language,
        recorded: recordedFor(this.entries, step, rerun),
        append: (entries) => this.append(toJournalIds(step, entries)),
        keyPrefix: idempotencyScope(this.ctx.task.id, step),
        journalId: (id) => callIdInStep(step, id),
        ...(carry ? { carry } : {}),
      })
      .then((result) => withJournalIds(step, result));
  }
}

/** A call in doubt is named by the task's call id, which is what a human's decision must quote. */
function withJournalIds(step: number, result: ExecutionResult): ExecutionResult {
  if (result.status !== 'failed' || typeof result.error.details?.call_id !== 'string') return result;
  const calls = result.error.details.calls;
  const details = {
    ...result.error.details,
    call_id: callIdInStep(step, result.error.details.call_id),
    // Every call of the pause, as the journal names them (each is decided by that id).
    ...(Array.isArray(calls)
      ? {
          calls: calls.map((c: unknown) =>
            isCall(c) ? { ...c, call_id: callIdInStep(step, c.call_id) } : c,
          ),
        }
      : {}),
  };
  return { ...result, error: { ...result.error, details } };
}

function isCall(c: unknown): c is { readonly call_id: string } {
  return typeof c === 'object' && c !== null && typeof (c as { call_id?: unknown }).call_id === 'string';
}
