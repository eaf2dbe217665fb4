import type { JSX } from 'preact';
import type { TaskView } from './types.ts';

export function StatusBadge(props: { task: Pick<TaskView, 'status' | 'pause_reason'> }): JSX.Element {
  const { status, pause_reason } = props.task;
  return (
    <span class={`badge status-${status}`} data-testid="status">
      {status}
      {pause_reason ? ` (${pause_reason})` : ''}
    </span>
  );
}
