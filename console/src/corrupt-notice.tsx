import type { JSX } from 'preact';
import { plural } from './plural.ts';
import type { CorruptItem } from './types.ts';
import { taskHref } from './use-route.ts';

/** The tasks a list skipped because the store cannot read them as written: named, never silently missing. */
export function CorruptNotice(props: { items: readonly CorruptItem[] }): JSX.Element | null {
  if (props.items.length === 0) return null;
  return (
    <div class="error" role="alert" data-testid="corrupt-notice">
      <strong>{plural(props.items.length, 'task')} could not be read</strong> (the database was changed behind
      the service; <code>codecall audit verify</code> says more):
      <ul>
        {props.items.map((c) => (
          <li key={c.task_id} data-testid="corrupt-task" data-task-id={c.task_id}>
            <a href={taskHref(c.task_id)} class="mono">
              {c.task_id}
            </a>{' '}
            {c.status}: <strong>{c.code}</strong> {c.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
