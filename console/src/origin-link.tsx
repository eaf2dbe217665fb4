import type { JSX } from 'preact';
import type { CallOrigin } from './types.ts';
import { taskHref } from './use-route.ts';

/**
 * Where an earlier attempt ran a call: a link to that task's page and the call's id, or (no task) an earlier
 * step of this task. Ids come from the task's journal: shown as text, and in the link only URI-encoded.
 */
export function OriginLink(props: { origin: CallOrigin }): JSX.Element {
  const { task_id, call_id } = props.origin;
  return (
    <span class="origin" data-testid="origin" data-call-id={call_id}>
      {task_id !== undefined ? (
        <>
          <a href={taskHref(task_id)} class="mono" data-testid="origin-link" data-task-id={task_id}>
            {task_id}
          </a>{' '}
          call <span class="mono">{call_id}</span>
        </>
      ) : (
        <>
          an earlier step of this task, call <span class="mono">{call_id}</span>
        </>
      )}
    </span>
  );
}
