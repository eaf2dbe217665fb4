import type { JSX } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ApiError } from './api.ts';
import { CorruptNotice } from './corrupt-notice.tsx';
import { ErrorBox } from './error-box.tsx';
import { when } from './format.ts';
import { LiveBadge, StatusBadge } from './status-badge.tsx';
import { isNewer, STATUSES } from './types.ts';
import type { CorruptItem, TaskStatus, TaskView } from './types.ts';
import { taskHref } from './use-route.ts';
import { useTenantListener } from './use-tenant-events.ts';
import type { TenantEvents } from './use-tenant-events.ts';

/**
 * Every task of the tenant, newest first, kept current by the tenant's stream (GET /api/v1/task-events): the
 * list is (re)loaded once the stream is subscribed (`ready`) and at each change of the filters, so no change
 * between the two is missed.
 */
export function TaskList(props: { api: Api; events: TenantEvents }): JSX.Element {
  const { api, events } = props;
  const [status, setStatus] = useState<TaskStatus | ''>('');
  const [session, setSession] = useState('');
  // What is typed; applied (the list read again) on Enter or leaving the field.
  const [sessionDraft, setSessionDraft] = useState('');
  const [search, setSearch] = useState('');
  const [tasks, setTasks] = useState<ReadonlyMap<string, TaskView>>(new Map());
  const [found, setFound] = useState<TaskView | null>(null);
  const [corrupt, setCorrupt] = useState<ReadonlyMap<string, CorruptItem>>(new Map());
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);

  // Only the newest load counts: one for filters since changed may answer last.
  const generation = useRef(0);
  const load = useCallback(() => {
    const n = ++generation.current;
    setLoading(true);
    api
      .tasks({ status: status || undefined, session_id: session || undefined })
      .then(({ tasks: list, corrupt: broken }) => {
        if (n !== generation.current) return;
        setCorrupt(new Map(broken.map((c) => [c.task_id, c])));
        // Events that came while the list was read are newer than it.
        setTasks((now) => {
          const next = new Map(list.map((t) => [t.task_id, t]));
          for (const [id, t] of now) {
            const old = next.get(id);
            if (old && isNewer(t, old)) next.set(id, t);
          }
          return next;
        });
        setError(null);
      })
      .catch(setError)
      .finally(() => setLoading(false));
  }, [api, status, session]);

  useEffect(() => {
    if (events.ready > 0) load();
  }, [events.ready, load]);
  useTenantListener(events, (event, data) => {
    if (event === 'corrupt') {
      const c = data as CorruptItem;
      setCorrupt((now) => new Map(now).set(c.task_id, c));
      setTasks((now) => {
        const next = new Map(now);
        next.delete(c.task_id);
        return next;
      });
      return;
    }
    if (event !== 'task') return;
    const t = data as TaskView;
    const fits = (!status || t.status === status) && (!session || t.session_id === session);
    // A task found by id (outside the list) is kept current too.
    setFound((f) => (f?.task_id === t.task_id && isNewer(t, f) ? t : f));
    setTasks((now) => {
      const next = new Map(now);
      if (!fits) next.delete(t.task_id);
      else if (isNewer(t, now.get(t.task_id))) next.set(t.task_id, t);
      return next;
    });
  });

  // Search by id: a task not in the loaded list is asked for directly (once per term, not at every change).
  const term = search.trim();
  const inList = useMemo(() => [...tasks.keys()].some((id) => id.includes(term)), [tasks, term]);
  useEffect(() => {
    setFound(null);
    if (term.length < 4 || inList) return;
    const abort = new AbortController();
    api
      .task(term, abort.signal)
      .then(setFound)
      .catch((e: unknown) => {
        if (!(e instanceof ApiError && e.code === 'NOT_FOUND') && !abort.signal.aborted) setError(e);
      });
    return () => abort.abort();
  }, [api, term, inList]);

  const rows = useMemo(() => {
    const all = [...tasks.values()];
    const shown = term ? all.filter((t) => t.task_id.includes(term)) : all;
    if (found && !shown.some((t) => t.task_id === found.task_id)) shown.push(found);
    return shown.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  }, [tasks, term, found]);

  return (
    <section>
      <h2>
        Tasks <LiveBadge state={events.live} title="the list updates by itself" />
      </h2>
      <div class="filters">
        <label>
          Status
          <select
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as TaskStatus | '')}
            data-testid="filter-status"
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option value={s} key={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Session
          <input
            value={sessionDraft}
            onInput={(e) => setSessionDraft(e.currentTarget.value)}
            onChange={(e) => setSession(e.currentTarget.value.trim())}
            placeholder="session id"
            data-testid="filter-session"
          />
        </label>
        <label>
          Search by id
          <input
            type="search"
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
            placeholder="task_..."
            data-testid="search"
          />
        </label>
      </div>
      <ErrorBox error={error} />
      <CorruptNotice items={[...corrupt.values()]} />
      <div class="table-scroll">
        <table class="tasks" data-testid="task-table">
          <thead>
            <tr>
              <th>Task</th>
              <th>Status</th>
              <th>Kind</th>
              <th>Session</th>
              <th>Created</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.task_id} data-testid="task-row" data-task-id={t.task_id} data-status={t.status}>
                <td>
                  <a href={taskHref(t.task_id)} class="mono">
                    {t.task_id}
                  </a>
                </td>
                <td>
                  <StatusBadge task={t} />
                </td>
                <td>{t.instruction !== null ? `agent (${t.mode ?? 'code'})` : t.language}</td>
                <td class="mono">{t.session_id ?? ''}</td>
                <td>{when(t.created_at)}</td>
                <td>{when(t.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !loading ? (
        <p class="muted empty" data-testid="no-tasks">
          {status || session || term
            ? 'No tasks match these filters: change them to see others, or '
            : 'No tasks yet: '}
          <a href="#/submit">submit a task</a> (or send one to POST /api/v1/tasks).
        </p>
      ) : null}
    </section>
  );
}
