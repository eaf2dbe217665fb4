/**
 * Journal entry types, in the order they typically appear. Data shapes are JSON objects; tool arguments and
 * outcomes are kept as the tagged-JSON strings that crossed the sandbox boundary.
 */
export type JournalEntryType =
  | 'task_input' // { code_hash, tools_hash, language, seed, limits }
  | 'manifest' // { tools_hash, engine }: the tools (names, schemas, effects) and engine the journal was written with
  | 'model_request' // { step, messages, tools }: what was sent to the model beyond what earlier entries hold
  | 'model_reply' // { step, content, tool_calls, finish_reason, usage, model }
  | 'code_block' // { block, code_hash, code? }: agent steps carry their code
  | 'step_result' // { step, ok, output?, error?, logs, final, calls? }: how an agent step ended
  | 'tool_intent' // { call_id, tool, args, idempotency_key }
  | 'tool_outcome' // { call_id, ok, payload, clock }
  | 'clock' // { clock }
  | 'approval_request' // { approval_id, call_id, tool, args }
  | 'approval_decision' // { approval_id, decision, actor, reason }
  | 'input_request' // { call_id, name, timeout_seconds, deadline }
  | 'input_provided' // { call_id, name, value, actor }
  | 'input_timeout' // { call_id, name }
  | 'attention_decision' // { call_id, action: retry | skip | fail, payload?, actor, reason }
  | 'control'; // { action, actor, reason }

export interface JournalEntryInput {
  readonly type: JournalEntryType;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface JournalEntry extends JournalEntryInput {
  readonly taskId: string;
  /** 1, 2, 3, ... per task, gap-free. */
  readonly seq: number;
  /** Hex SHA-256 over (previous entry's checksum, seq, type, canonical JSON of data): a per-task hash chain. */
  readonly checksum: string;
  readonly createdAt: string;
}
