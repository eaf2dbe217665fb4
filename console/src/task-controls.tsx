import type { JSX } from 'preact';
import type { TaskView } from './types.ts';
import { isTerminal } from './types.ts';

/** Why a paused task has no Resume: it goes on by itself once what it waits for is given. */
const WAITS_FOR: Readonly<Record<string, string>> = {
  approval_required: 'it resumes once its approvals are decided',
  awaiting_input: 'it resumes once its input is given',
  needs_attention: 'it resumes once the call in doubt is decided',
};

/**
 * Pause, resume and cancel, only those that can work now: none on an ended task (which says so instead), Resume
 * only on a paused one (disabled, with why, while it waits for a decision).
 */
export function TaskControls(props: {
  task: TaskView;
  busy: boolean;
  onControl: (action: 'pause' | 'resume' | 'cancel') => void;
}): JSX.Element {
  const { task, busy } = props;
  const s = task.status;
  if (isTerminal(s)) {
    return (
      <p class="muted" data-testid="ended-note">
        This task has ended ({s}): there is nothing to pause, resume or cancel.
        {task.instruction === null && task.code !== null
          ? ' Edit and rerun runs it again as a new task.'
          : ''}
      </p>
    );
  }
  const button = (
    action: 'pause' | 'resume' | 'cancel',
    label: string,
    enabled = true,
    title?: string,
  ): JSX.Element => (
    <button
      type="button"
      class={action === 'cancel' ? 'danger' : undefined}
      disabled={busy || !enabled}
      title={title}
      onClick={() => props.onControl(action)}
      data-testid={action}
    >
      {label}
    </button>
  );
  const waits = (task.pause_reason && WAITS_FOR[task.pause_reason]) ?? undefined;
  return (
    <>
      {s === 'paused'
        ? button('resume', 'Resume', task.resumable, task.resumable ? undefined : waits)
        : button('pause', 'Pause')}
      {button('cancel', 'Cancel')}
      {s === 'paused' && !task.resumable && waits ? (
        <span class="muted" data-testid="resume-note">
          Paused: {waits}.
        </span>
      ) : null}
    </>
  );
}
