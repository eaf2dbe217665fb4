import { sha256Hex } from '../codec/index.ts';
import { LISTED_HEAD_CHARS, MAX_LISTED_FIELD_CHARS, listedText } from '../spec/index.ts';
import type { ListedInput, ListedInputField } from '../spec/index.ts';
import { LISTED_FIELDS } from '../api/index.ts';
import type { ListedField, TaskListItem, TaskView, TruncatedField } from '../api/index.ts';

/**
 * The view as a list or the task-events stream gives it (ADR 0029): each of LISTED_FIELDS over
 * MAX_LISTED_FIELD_CHARS replaced by its size, digest and (text) first characters, and named in `truncated`. A page
 * of 1000 tasks then weighs at most about 1000 x 10 x 4 KiB, whatever the tasks hold; GET /api/v1/tasks/{id} keeps
 * them whole. `listed`: the digests a summarised store read gave instead of the input's big fields (ADR 0036).
 */
export function listItem(view: TaskView, listed: ListedInput = {}): TaskListItem {
  let out: Record<string, unknown> | null = null;
  const truncated: ListedField[] = [];
  for (const key of LISTED_FIELDS) {
    const digest = key in listed ? listed[key as ListedInputField] : undefined;
    if (digest !== undefined) {
      out ??= { ...view };
      out[key] = { truncated: true, ...digest } satisfies TruncatedField;
      truncated.push(key);
      continue;
    }
    const value: unknown = view[key];
    const text = listedText(value);
    if (text === null || text.length <= MAX_LISTED_FIELD_CHARS) continue;
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
