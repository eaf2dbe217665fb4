import { sha256Hex } from '../codec/index.ts';
import type { ListedField, TaskListItem, TaskView, TruncatedField } from '../api/index.ts';

/** Every ListedField, once (the record's keys make the compiler check the list is whole). */
const LISTED: Record<ListedField, true> = {
  code: true,
  instruction: true,
  metadata: true,
  pending_approvals: true,
  attention: true,
  attention_calls: true,
  steps: true,
  result: true,
  error: true,
  artifacts: true,
};
export const LISTED_FIELDS = Object.keys(LISTED) as readonly ListedField[];

/** A field of a listed view over this many characters (as JSON; a string: itself) is summarised. */
export const MAX_LISTED_FIELD_CHARS = 4 * 1024;
/** The characters of a summarised string a list still shows. */
export const LISTED_HEAD_CHARS = 256;

/**
 * The view as a list or the task-events stream gives it (ADR 0029): each of LISTED_FIELDS over
 * MAX_LISTED_FIELD_CHARS replaced by its size, digest and (text) first characters, and named in `truncated`. A page
 * of 1000 tasks then weighs at most about 1000 x 10 x 4 KiB, whatever the tasks hold; GET /api/v1/tasks/{id} keeps
 * them whole.
 */
export function listItem(view: TaskView): TaskListItem {
  let out: Record<string, unknown> | null = null;
  const truncated: ListedField[] = [];
  for (const key of LISTED_FIELDS) {
    const value: unknown = view[key];
    if (value === null || value === undefined) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (text.length <= MAX_LISTED_FIELD_CHARS) continue;
    out ??= { ...view };
    const field: TruncatedField = {
      truncated: true,
      bytes: Buffer.byteLength(text),
      sha256: sha256Hex(text),
      ...(typeof value === 'string' ? { head: value.slice(0, LISTED_HEAD_CHARS) } : {}),
    };
    out[key] = field;
    truncated.push(key);
  }
  return out === null ? view : ({ ...out, truncated } as unknown as TaskListItem);
}
