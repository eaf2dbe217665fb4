import type { JSX } from 'preact';
import { useCallback, useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { CorruptNotice } from './corrupt-notice.tsx';
import { ErrorBox } from './error-box.tsx';
import { pretty, when } from './format.ts';
import { LiveBadge } from './status-badge.tsx';
import type { CorruptItem, InboxItem } from './types.ts';
import { useAction } from './use-action.ts';
import { useLive } from './use-live.ts';
import { taskHref } from './use-route.ts';

/**
 * Every pending approval of the tenant's tasks, grouped by task, with the exact arguments the call would run
 * with. Read again whenever a task's status changes (GET /api/v1/task-events).
 */
export function Approvals(props: { api: Api }): JSX.Element {
  const { api } = props;
  const [items, setItems] = useState<readonly InboxItem[] | null>(null);
  const [corrupt, setCorrupt] = useState<readonly CorruptItem[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // One read at a time: changes during a read make one more read after it, not one each.
  const reading = useRef<'idle' | 'busy' | 'again'>('idle');
  const load = useCallback(() => {
    if (reading.current !== 'idle') {
      reading.current = 'again';
      return;
    }
    reading.current = 'busy';
    api
      .approvals()
      .then((r) => {
        setItems(r.approvals);
        setCorrupt(r.corrupt ?? []);
        setMore(typeof r.next_cursor === 'string');
        setError(null);
      })
      .catch(setError)
      .finally(() => {
        const again = reading.current === 'again';
        reading.current = 'idle';
        if (again) load();
      });
  }, [api]);
  const live = useLive(api, '/api/v1/task-events', (event) => {
    if (event === 'ready' || event === 'task' || event === 'corrupt') load();
  });
  const byTask = useMemo(() => {
    const groups = new Map<string, InboxItem[]>();
    for (const item of items ?? []) groups.set(item.task_id, [...(groups.get(item.task_id) ?? []), item]);
    return [...groups];
  }, [items]);
  return (
    <section>
      <h2>
        Approvals <LiveBadge state={live} />
      </h2>
      <ErrorBox error={error} />
      <CorruptNotice items={corrupt} />
      {items !== null && byTask.length === 0 ? (
        <p class="muted" data-testid="inbox-empty">
          Nothing waits for approval.
        </p>
      ) : null}
      {byTask.map(([taskId, group]) => (
        <TaskApprovals key={taskId} api={api} taskId={taskId} items={group} onDecided={load} />
      ))}
      {more ? (
        <p class="muted" data-testid="inbox-more">
          More tasks wait for approval: these are the oldest. Decide them to see the next.
        </p>
      ) : null}
    </section>
  );
}

function TaskApprovals(props: {
  api: Api;
  taskId: string;
  items: readonly InboxItem[];
  onDecided: () => void;
}): JSX.Element {
  const { api, taskId, items } = props;
  const [reason, setReason] = useState('');
  const { busy, error, run } = useAction();
  const decide = (decision: 'approve' | 'reject', ids?: string[]): Promise<void> =>
    run(async () => {
      await api.decide(taskId, {
        decision,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
        ...(ids ? { approval_ids: ids } : {}),
      });
      props.onDecided();
    });
  /** Approve and Reject, for the approvals named (all of the task's when none are). */
  const buttons = (ids: string[] | undefined, testSuffix: string, label: string): JSX.Element => (
    <>
      <button
        type="button"
        disabled={busy}
        onClick={() => void decide('approve', ids)}
        data-testid={`approve${testSuffix}`}
      >
        Approve{label}
      </button>{' '}
      <button
        type="button"
        class="danger"
        disabled={busy}
        onClick={() => void decide('reject', ids)}
        data-testid={`reject${testSuffix}`}
      >
        Reject{label}
      </button>
    </>
  );
  const first = items[0];
  return (
    <article class="inbox-task" data-testid="inbox-task" data-task-id={taskId}>
      <h3>
        <a href={taskHref(taskId)} class="mono">
          {taskId}
        </a>{' '}
        <span class="muted">
          {first?.session_id ? `session ${first.session_id} · ` : ''}
          {items.length} request(s)
        </span>
      </h3>
      <ul>
        {items.map((a) => (
          <li key={a.approval_id} class="approval" data-testid="approval" data-approval-id={a.approval_id}>
            <div class="approval-head">
              <strong data-testid="approval-tool">{a.tool}</strong>{' '}
              <span class="muted">
                {a.approval_id} · asked {when(a.requested_at)}
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
      <div class="inbox-actions">
        <label>
          Reason (optional, journaled with the decision)
          <input
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
            maxLength={2000}
            data-testid="reason"
          />
        </label>
        {items.length > 1 ? buttons(undefined, '-all', ` all ${items.length}`) : null}
      </div>
      <ErrorBox error={error} testid="decision-error" />
    </article>
  );
}
