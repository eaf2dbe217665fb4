import { sha256Hex } from '../codec/index.ts';
import { LISTED_HEAD_CHARS, MAX_LISTED_FIELD_CHARS, listedText } from '../spec/index.ts';
import type { FieldDigest, ListedInput, ListedInputField, TaskInput } from '../spec/index.ts';

// The `listed_input` column (ADR 0036): written with the task, read by a summarised list instead of `input`
// (which is the row's last column, so a list never walks its pages either).

const FIELDS: readonly ListedInputField[] = ['code', 'instruction', 'metadata'];

/** What `listed_input` holds: the input with its big fields cut to their heads (metadata dropped), and their digests. */
export interface ListedInputColumn {
  readonly input: TaskInput;
  readonly listed: ListedInput;
}

/** The column's text for this input; null when no field is over MAX_LISTED_FIELD_CHARS (a list reads `input`). */
export function listedInputColumn(input: TaskInput): string | null {
  const listed: Partial<Record<ListedInputField, FieldDigest>> = {};
  const cut: Record<string, unknown> = { ...input };
  for (const field of FIELDS) {
    const value: unknown = (input as unknown as Record<string, unknown>)[field];
    const text = listedText(value);
    if (text === null || text.length <= MAX_LISTED_FIELD_CHARS) continue;
    const head = typeof value === 'string' ? value.slice(0, LISTED_HEAD_CHARS) : undefined;
    listed[field] = {
      bytes: Buffer.byteLength(text),
      sha256: sha256Hex(text),
      ...(head === undefined ? {} : { head }),
    };
    if (head === undefined) delete cut[field];
    else cut[field] = head;
  }
  if (Object.keys(listed).length === 0) return null;
  const column: ListedInputColumn = { input: cut as unknown as TaskInput, listed };
  return JSON.stringify(column);
}
