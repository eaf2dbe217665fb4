import type { CallOrigin } from './call-origin.ts';

/**
 * The `control` entries of a journal, one member per action. A run's ends and a human's decisions are journaled
 * as controls; the JournalingHost journals the starts of calls it may have to ask about again. Any of them may
 * name the actor who asked for it.
 */
/** A call in doubt as a `needs_attention` control names it. */
export interface AttentionCallData {
  readonly call_id: string;
  readonly tool: string;
  readonly args: string;
  /**
   * Set when the call is a revision's: an earlier attempt completed this tool with other arguments, and the
   * revision may not simply run it (ADR 0034). Absent: the call was lost in an interruption.
   */
  readonly earlier?: RevisedFrom;
}

/** The earlier attempt's completed call a revised call stands beside. */
export interface RevisedFrom {
  readonly origin: CallOrigin;
  readonly tool: string;
  readonly args: string;
}

export type JournalControl =
  /** A claim starts a run; `stalled` counts the runs in a row that ended without progress (crash loop). */
  | {
      readonly action: 'attempt';
      readonly stalled: number;
      /** The run's span when it was traced: the next run's span links to it (ADR 0053). */
      readonly trace?: { readonly trace_id: string; readonly span_id: string };
    }
  | { readonly action: 'pause'; readonly actor?: string }
  | { readonly action: 'resume'; readonly actor: string }
  | { readonly action: 'cancel'; readonly actor?: string; readonly reason?: string }
  /** The task's deadline (ISO 8601) passed while it was paused. */
  | { readonly action: 'deadline'; readonly deadline: string }
  | { readonly action: 'await_approval'; readonly actor?: string }
  | { readonly action: 'await_input'; readonly actor?: string }
  /**
   * Lost unsafe calls wait on a human: `calls` lists every one of them (raised together, decided together); the
   * first is also `call_id`/`tool`/`args` (null when the pause came without one; absent in older journals).
   */
  | {
      readonly action: 'needs_attention';
      readonly call_id?: string | null;
      readonly tool?: string | null;
      readonly args?: string | null;
      readonly calls?: readonly AttentionCallData[];
      readonly actor?: string;
    }
  /** A retryable failure: the task runs again after `run_after` (epoch ms). */
  | {
      readonly action: 'retry';
      readonly code: string;
      readonly retry: number;
      readonly run_after: number;
      readonly actor?: string;
    }
  /** The tools or engine changed since the journal was written. */
  | { readonly action: 'incompatible' }
  | { readonly action: 'fail'; readonly actor: string; readonly reason: string }
  | { readonly action: 'accept_changed_tools'; readonly actor: string; readonly reason: string }
  /** An approved call began running: from here a crash leaves it in doubt like any other. */
  | { readonly action: 'approved_call_started'; readonly call_id: string }
  /** A lost call a human chose to retry, or one that never started, began running again. */
  | { readonly action: 'retry_started'; readonly call_id: string }
  /** The execution ended between a call's intent and its start: it never ran. */
  | { readonly action: 'not_started'; readonly call_id: string }
  /** A revision's call that another attempt completed with other arguments: held for a human (ADR 0034). */
  | { readonly action: 'revision_held'; readonly call_id: string; readonly earlier: RevisedFrom };

export type ControlAction = JournalControl['action'];

export type ControlOf<A extends ControlAction> = Extract<JournalControl, { readonly action: A }>;
