import type { ComponentChildren, JSX } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import { pretty, when } from './format.ts';
import { plural } from './plural.ts';
import type { TaskView } from './types.ts';
import { useAction } from './use-action.ts';

/** A request waiting for a decision: the inbox's items, or a task view's `pending_approvals`. */
export interface PendingApproval {
  readonly approval_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly requested_at?: string;
  readonly expires_at?: string | null;
}

/**
 * Approve or reject one task's pending requests (the inbox and the task page alike): the reason first, then each
 * request with its exact arguments and buttons, and for several, buttons for all. A rejection needs a reason, as
 * `codecall tasks reject` does (the program sees it in TOOL_REJECTED): without one nothing is sent.
 */
export function ApprovalDecision(props: {
  api: Api;
  taskId: string;
  items: readonly PendingApproval[];
  onDecided: (view: TaskView) => void;
  head?: ComponentChildren;
  testid: string;
}): JSX.Element {
  const { api, taskId, items } = props;
  const [reason, setReason] = useState('');
  const [missing, setMissing] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const { busy, error, run } = useAction();
  const decide = (decision: 'approve' | 'reject', ids?: string[]): Promise<void> => {
    const why = reason.trim();
    if (decision === 'reject' && why === '') {
      setMissing(true);
      field.current?.focus();
      return Promise.resolve();
    }
    return run(async () => {
      const view = await api.decide(taskId, {
        decision,
        ...(why ? { reason: why } : {}),
        ...(ids ? { approval_ids: ids } : {}),
      });
      props.onDecided(view);
    });
  };
  /** Approve and Reject, for the approvals named (all of the task's when none are). */
  const buttons = (ids: string[] | undefined, testSuffix: string, label: string): JSX.Element => (
    <div class="decision-buttons">
      <button
        type="button"
        disabled={busy}
        onClick={() => void decide('approve', ids)}
        data-testid={`approve${testSuffix}`}
      >
        Approve{label}
      </button>
      <button
        type="button"
        class="danger"
        disabled={busy}
        onClick={() => void decide('reject', ids)}
        data-testid={`reject${testSuffix}`}
      >
        Reject{label}
      </button>
    </div>
  );
  return (
    <article class="inbox-task" data-testid={props.testid} data-task-id={taskId}>
      {props.head}
      <label class="reason">
        Reason (journaled with the decision; a rejection needs one: the program sees it)
        <input
          ref={field}
          value={reason}
          onInput={(e) => {
            setReason(e.currentTarget.value);
            setMissing(false);
          }}
          maxLength={2000}
          aria-invalid={missing}
          data-testid="reason"
        />
      </label>
      {missing ? (
        <p class="error" role="alert" data-testid="reason-required">
          Give a reason to reject: the program gets it with TOOL_REJECTED. Nothing was sent.
        </p>
      ) : null}
      <ul>
        {items.map((a) => (
          <li key={a.approval_id} class="approval" data-testid="approval" data-approval-id={a.approval_id}>
            <div class="approval-head">
              <strong data-testid="approval-tool">{a.tool}</strong>{' '}
              <span class="muted">
                {a.approval_id}
                {a.requested_at ? ` · asked ${when(a.requested_at)}` : ''}
                {a.expires_at ? (
                  <span data-testid="approval-expires"> · expires {when(a.expires_at)}</span>
                ) : null}
              </span>
            </div>
            <pre data-testid="approval-args">{pretty(a.arguments)}</pre>
            {buttons([a.approval_id], '', '')}
          </li>
        ))}
      </ul>
      {items.length > 1 ? buttons(undefined, '-all', ` all ${plural(items.length, 'request')}`) : null}
      <ErrorBox error={error} testid="decision-error" />
    </article>
  );
}
