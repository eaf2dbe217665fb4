import type { JournalEntryType } from './journal.ts';

/** The journal entries a replay needs (an execution's earlier calls and the decisions on them). */
export const REPLAY_ENTRIES: ReadonlySet<JournalEntryType> = new Set<JournalEntryType>([
  'tool_intent',
  'tool_outcome',
  'approval_request',
  'approval_decision',
  'input_request',
  'input_provided',
  'input_timeout',
  'attention_decision',
  'control',
]);
