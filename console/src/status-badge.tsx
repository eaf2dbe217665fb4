import type { JSX } from 'preact';
import type { TaskView } from './types.ts';
import type { LiveState } from './use-live.ts';

export function StatusBadge(props: { task: Pick<TaskView, 'status' | 'pause_reason'> }): JSX.Element {
  const { status, pause_reason } = props.task;
  return (
    <span class={`badge status-${status}`} data-testid="status">
      {status}
      {pause_reason ? ` (${pause_reason})` : ''}
    </span>
  );
}

/** Where a page's live stream stands (see useLive). */
export function LiveBadge(props: { state: LiveState; title?: string }): JSX.Element {
  return (
    <span class={`live live-${props.state}`} data-testid="live-state" title={props.title}>
      {props.state}
    </span>
  );
}
