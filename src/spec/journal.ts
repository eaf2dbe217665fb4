import type { JournalEntryInputOf, JournalEntryType } from './journal-entry.ts';

export type {
  JournalEntryData,
  JournalEntryInputOf,
  JournalEntryType,
  NotRepeatedCall,
} from './journal-entry.ts';
export type {
  AttentionCallData,
  ControlAction,
  ControlOf,
  JournalControl,
  RevisedFrom,
} from './journal-control.ts';

/** An entry to append: one member per entry type, so `type` narrows `data`. */
export type JournalEntryInput = { [T in JournalEntryType]: JournalEntryInputOf<T> }[JournalEntryType];

export interface JournalEntryMeta {
  readonly taskId: string;
  /** 1, 2, 3, ... per task, gap-free. */
  readonly seq: number;
  /** Hex SHA-256 over (previous entry's checksum, seq, type, canonical JSON of data): a per-task hash chain. */
  readonly checksum: string;
  readonly createdAt: string;
}

/** A stored entry, parsed (`parseJournalEntry`) when it was read. */
export type JournalEntry = JournalEntryInput & JournalEntryMeta;

export type JournalEntryOf<T extends JournalEntryType> = JournalEntryInputOf<T> & JournalEntryMeta;

/** The call an entry is about (its `call_id`), for the types and control actions that name one; else null. */
export function callIdOf(entry: JournalEntryInput): string | null {
  switch (entry.type) {
    case 'tool_intent':
    case 'tool_outcome':
    case 'approval_request':
    case 'input_request':
    case 'input_provided':
    case 'input_timeout':
    case 'attention_decision':
      return entry.data.call_id;
    case 'control':
      return 'call_id' in entry.data ? (entry.data.call_id ?? null) : null;
    case 'task_input':
    case 'manifest':
    case 'model_request':
    case 'model_reply':
    case 'code_block':
    case 'step_result':
    case 'clock':
    case 'approval_decision':
    case 'carry_offer':
      return null;
    default:
      return unknownEntry(entry);
  }
}

/** The `default` of an exhaustive switch over entries: unreachable unless a type is left unhandled. */
export function unknownEntry(entry: never): never {
  throw new Error(`unhandled journal entry ${JSON.stringify(entry)}`);
}
