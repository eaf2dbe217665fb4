import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Api } from './api.ts';
import { ApprovalDecision } from './approval-decision.tsx';
import { CorruptNotice } from './corrupt-notice.tsx';
import { ErrorBox } from './error-box.tsx';
import { plural } from './plural.ts';
import { LiveBadge } from './status-badge.tsx';
import type { InboxItem } from './types.ts';
import type { Inbox } from './use-inbox.ts';
import { taskHref } from './use-route.ts';

/** Every pending approval of the tenant's tasks, grouped by task, with the exact arguments the call would run with. */
export function Approvals(props: { api: Api; inbox: Inbox }): JSX.Element {
  const { api, inbox } = props;
  const { items } = inbox;
  const byTask = useMemo(() => {
    const groups = new Map<string, InboxItem[]>();
    for (const item of items ?? []) groups.set(item.task_id, [...(groups.get(item.task_id) ?? []), item]);
    return [...groups];
  }, [items]);
  return (
    <section>
      <h2>
        Approvals <LiveBadge state={inbox.live} />
      </h2>
      <ErrorBox error={inbox.error} />
      <CorruptNotice items={inbox.corrupt} />
      {items !== null && byTask.length === 0 ? (
        <p class="muted empty" data-testid="inbox-empty">
          Nothing waits for approval. A task whose tool call needs a human's approval pauses and waits here:{' '}
          <a href="#/submit">submit a task</a>.
        </p>
      ) : null}
      {byTask.map(([taskId, group]) => (
        <ApprovalDecision
          key={taskId}
          api={api}
          taskId={taskId}
          items={group}
          onDecided={inbox.load}
          testid="inbox-task"
          head={
            <h3>
              <a href={taskHref(taskId)} class="mono">
                {taskId}
              </a>{' '}
              <span class="muted">
                {group[0]?.session_id ? `session ${group[0].session_id} · ` : ''}
                <span data-testid="request-count">{plural(group.length, 'request')}</span>
              </span>
            </h3>
          }
        />
      ))}
      {inbox.more ? (
        <p class="muted" data-testid="inbox-more">
          More tasks wait for approval: these are the oldest. Decide them to see the next.
        </p>
      ) : null}
    </section>
  );
}
