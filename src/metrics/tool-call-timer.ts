import { callIdOf } from '../spec/index.ts';
import type { JournalEntry } from '../spec/index.ts';

interface Call {
  readonly tool: string;
  /** Null while the call waits for a human (approval, input) or its run was paused: that is not tool time. */
  startedAt: number | null;
}

/**
 * Times tool calls from the journal as it is written: `tool_intent` (or the start of an approved or retried
 * call) to `tool_outcome`, by call id. Timers are not tools, nor are calls taken over or refused by a budget (not
 * run). A task's calls are forgotten when it ends.
 */
export class ToolCallTimer {
  private readonly tasks = new Map<string, Map<string, Call>>();

  constructor(
    private readonly observe: (tool: string, ok: boolean, seconds: number) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  onEntries(taskId: string, entries: readonly JournalEntry[]): void {
    for (const e of entries) {
      const callId = callIdOf(e);
      if (callId === null) continue;
      if (e.type === 'tool_intent') {
        // A call taken over from an earlier attempt did not run: it has no time (codecall_tool_calls_carried_total);
        // nor did one refused by its budget (codecall_tool_budget_refusals_total).
        if (e.data.tool === 'timer' || e.data.carried_from || e.data.over_budget) continue;
        // A read's intent comes with its outcome and says when its tool started (ADR 0047, amended 2026-12-07).
        const ran = e.data.started_at === undefined ? 0 : Math.max(0, Date.now() - e.data.started_at);
        this.callsOf(taskId).set(callId, { tool: e.data.tool, startedAt: this.now() - ran });
        continue;
      }
      const call = this.tasks.get(taskId)?.get(callId);
      if (!call) continue;
      if (e.type === 'approval_request' || e.type === 'input_request') call.startedAt = null;
      else if (
        e.type === 'control' &&
        (e.data.action === 'approved_call_started' || e.data.action === 'retry_started')
      )
        call.startedAt = this.now();
      else if (e.type === 'tool_outcome') {
        this.tasks.get(taskId)?.delete(callId);
        if (call.startedAt !== null) this.observe(call.tool, e.data.ok, (this.now() - call.startedAt) / 1000);
      }
    }
  }

  /** A paused run was torn down: its calls in flight did not finish (a resume starts them again). */
  onPaused(taskId: string): void {
    for (const call of this.tasks.get(taskId)?.values() ?? []) call.startedAt = null;
  }

  onEnded(taskId: string): void {
    this.tasks.delete(taskId);
  }

  private callsOf(taskId: string): Map<string, Call> {
    let calls = this.tasks.get(taskId);
    if (!calls) this.tasks.set(taskId, (calls = new Map<string, Call>()));
    return calls;
  }
}
