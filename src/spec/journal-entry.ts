import type { CallOrigin } from './call-origin.ts';
import type { JournalControl } from './journal-control.ts';
import type { ChatMessage, ModelToolCall, ModelUsage, ReplyViolation, ToolSpec } from './model.ts';
import type { LogEntry } from './sandbox.ts';
import type { ToolEffect } from './tool.ts';
import type { RefusalName } from './budget-types.ts';

/** A completed call of an earlier attempt that a revision did not make again (ADR 0034). */
export interface NotRepeatedCall {
  readonly call_id: string;
  readonly tool: string;
  readonly args: string;
}

/**
 * The data of each journal entry type, in the order they typically appear. Tool arguments and outcomes are kept
 * as the tagged-JSON strings that crossed the sandbox boundary. Stored data may hold more fields than these (they
 * are kept, and hashed, as written).
 */
export interface JournalEntryData {
  readonly task_input: {
    readonly code_hash: string;
    readonly tools_hash: string;
    readonly language: string;
    readonly seed?: number;
    /** Absent in journals written before tasks carried limits. */
    readonly limits?: Readonly<Record<string, unknown>> | null;
  };
  /** The tools (names, schemas, effects) and engine the journal was written with; `accepted` a change let pass. */
  readonly manifest: { readonly tools_hash: string; readonly engine: string; readonly accepted?: string };
  /** What was sent to the model beyond what earlier entries hold. */
  readonly model_request: {
    readonly step: number;
    readonly messages: readonly ChatMessage[];
    readonly tools?: readonly ToolSpec[];
  };
  readonly model_reply: {
    readonly step: number;
    readonly content: string | null;
    readonly tool_calls: readonly ModelToolCall[];
    readonly finish_reason?: string;
    readonly usage?: ModelUsage;
    readonly model?: string;
    /** The streamed reply was stopped at a byte its schema cannot take (ADR 0057). */
    readonly violation?: ReplyViolation;
  };
  /** Agent steps carry their code; block 0 of a code task does not. */
  readonly code_block: { readonly block: number; readonly code_hash: string; readonly code?: string };
  /** How an agent step ended. */
  readonly step_result: {
    readonly step: number;
    readonly ok: boolean;
    readonly final: boolean;
    /** Tagged JSON of the step's value (code mode). */
    readonly output: string | null;
    readonly error: {
      readonly code: string;
      readonly name: string;
      readonly message: string;
      readonly line?: number;
    } | null;
    readonly logs: readonly LogEntry[];
    /** Function-calling mode: what each call of the reply gave, in the reply's order. */
    readonly calls?: readonly {
      readonly id: string;
      readonly name: string;
      readonly ok: boolean;
      readonly content: string;
    }[];
    /** Code mode, a retried step (ADR 0034): calls taken over from the failed steps before it. */
    readonly carried?: number;
    /** Calls of the failed steps before it that changed the world and that this step did not make again. */
    readonly not_repeated?: readonly NotRepeatedCall[];
  };
  /**
   * `carried_from`: not run, its outcome taken over from an earlier attempt's completed call (ADR 0034). `cost`:
   * the call's cost against the task's `max_cost` when it is not DEFAULT_CALL_COST (fixed here, so a changed cost
   * function does not change the past); `over_budget`: refused before it ran, by this budget (ADR 0044) or tenant limit (ADR 0045). Journals
   * written before budgets have neither.
   */
  readonly tool_intent: {
    readonly call_id: string;
    readonly tool: string;
    readonly args: string;
    readonly idempotency_key?: string;
    readonly carried_from?: CallOrigin;
    readonly cost?: number;
    readonly over_budget?: RefusalName;
    /**
     * Epoch ms its tool started: set on a read's intent, journaled with its outcome in one append (ADR 0047,
     * amended 2026-12-07), so the call's duration is still known.
     */
    readonly started_at?: number;
  };
  /** A call an earlier task completed, offered to this task, a revision of it (ADR 0034); journaled before it runs. */
  readonly carry_offer: {
    readonly origin: CallOrigin;
    readonly tool: string;
    readonly args: string;
    readonly payload: string;
    readonly effect?: ToolEffect;
  };
  /** `payload` is the value's tagged JSON when ok, else the serialized error's JSON. */
  readonly tool_outcome: {
    readonly call_id: string;
    readonly ok: boolean;
    readonly payload: string;
    readonly clock?: number;
  };
  readonly clock: { readonly clock: number };
  /**
   * `roles` and `separation` are who may decide it, fixed when asked (the tool's declaration and the config then);
   * `expires_at` (epoch ms) is when the runtime expires it, absent: never.
   */
  readonly approval_request: {
    readonly approval_id: string;
    readonly call_id: string;
    readonly tool: string;
    readonly args: string;
    readonly roles?: readonly string[];
    readonly separation?: boolean;
    readonly expires_at?: number;
  };
  /** `expired`: no one decided in time; the runtime rejected it (actor `system`), the call fails APPROVAL_EXPIRED. */
  readonly approval_decision: {
    readonly approval_id: string;
    readonly decision: 'approve' | 'reject';
    readonly actor: string;
    readonly reason?: string;
    readonly expired?: boolean;
  };
  /** `deadline` is epoch ms, null to wait forever. */
  readonly input_request: {
    readonly call_id: string;
    readonly name: string;
    readonly timeout_seconds: number | null;
    readonly deadline: number | null;
    /**
     * A tool's request mid-call (`ToolContext.requestInput`, an MCP elicitation): the tool call it belongs to
     * (`call_id` is then `<call>~<n>`), what it says, and the answer's JSON Schema as JSON text.
     */
    readonly for_call?: string;
    readonly message?: string;
    readonly schema?: string;
  };
  /** `value` is the answer's tagged JSON. */
  readonly input_provided: {
    readonly call_id: string;
    readonly name: string;
    readonly value: string;
    readonly actor: string;
  };
  readonly input_timeout: { readonly call_id: string; readonly name: string };
  /** A human's decision on a lost unsafe call; `payload` is a skipped call's result (tagged JSON). */
  readonly attention_decision: {
    readonly call_id: string;
    readonly action: 'retry' | 'skip';
    readonly payload?: string;
    readonly actor: string;
    readonly reason: string;
  };
  readonly control: JournalControl;
}

export type JournalEntryType = keyof JournalEntryData;

/** One entry to append: a type and its data, one member per type. */
export type JournalEntryInputOf<T extends JournalEntryType> = {
  readonly type: T;
  readonly data: JournalEntryData[T];
};
