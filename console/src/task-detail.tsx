import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ApprovalDecision } from './approval-decision.tsx';
import { ArtifactImage, shownImageType } from './artifact-image.tsx';
import { Budgets } from './budgets.tsx';
import { ErrorBox } from './error-box.tsx';
import { bytes, when } from './format.ts';
import { Code } from './highlight.tsx';
import { noun, plural } from './plural.ts';
import { RevisedByBanner, RevisionBanner, ReviseForm, revisable } from './revision.tsx';
import { LiveBadge, StatusBadge } from './status-badge.tsx';
import { TaskControls } from './task-controls.tsx';
import { errorPlace, TaskResult } from './task-result.tsx';
import { Timeline } from './timeline-view.tsx';
import { WaitingActions } from './waiting-actions.tsx';
import { WaterfallView } from './waterfall-view.tsx';
import { isNewer } from './types.ts';
import type { LogEntry, TaskEvent, TaskView } from './types.ts';
import { useAction } from './use-action.ts';
import { useLive } from './use-live.ts';

/**
 * One task: what it runs, its controls, the timeline from its journal and audit log, logs, result, artifacts
 * and resources. Live while it runs: the task's stream sends status changes, log lines and journal entries; the
 * audit log (who changed the status) is read again at each status change.
 */
export function TaskDetail(props: { api: Api; id: string }): JSX.Element {
  const { api, id } = props;
  const [task, setTask] = useState<TaskView | null>(null);
  const [events, setEvents] = useState<readonly TaskEvent[]>([]);
  const [logs, setLogs] = useState<readonly LogEntry[]>([]);
  const [error, setError] = useState<unknown>(null);
  const { busy, error: actionError, run } = useAction();
  const reloads = useRef(0);
  // The first read, the stream and an action's answer may arrive in any order: the newest view wins.
  const show = useCallback((next: TaskView) => setTask((prev) => (isNewer(next, prev) ? next : prev)), []);

  const reloadEvents = useCallback(() => {
    const n = ++reloads.current;
    api
      .events(id)
      .then((list) => {
        if (n !== reloads.current) return;
        // Journal entries streamed after the read began are kept.
        const last = Math.max(0, ...list.filter((e) => e.source === 'journal').map((e) => e.seq));
        setEvents((now) => [...list, ...now.filter((e) => e.source === 'journal' && e.seq > last)]);
      })
      .catch(setError);
  }, [api, id]);

  useEffect(() => {
    api.task(id).then(show).catch(setError);
    reloadEvents();
  }, [api, id, reloadEvents, show]);

  const live = useLive(api, `/api/v1/tasks/${encodeURIComponent(id)}/stream`, (event, data) => {
    if (event === 'view' || event === 'status') {
      // A stream (also a reconnected one) starts with the view, then the lines the run printed so far.
      if (event === 'view') setLogs([]);
      show(data as TaskView);
      if (event === 'status') reloadEvents();
    } else if (event === 'log') {
      setLogs((l) => [...l, data as LogEntry]);
    } else if (event === 'journal') {
      const fresh = (data as TaskEvent[]).map((e) => ({ ...e, source: 'journal' as const }));
      setEvents((now) => {
        const have = new Set(now.filter((e) => e.source !== 'audit').map((e) => e.seq));
        return [...now, ...fresh.filter((e) => !have.has(e.seq))];
      });
    }
  });

  // An action's answer is the view after it; the audit log has a new entry then.
  const done = (view: TaskView): void => {
    show(view);
    reloadEvents();
  };
  const act = (work: () => Promise<TaskView>): Promise<void> => run(async () => done(await work()));

  if (!task) {
    return (
      <section>
        <h2 class="mono">{id}</h2>
        {error ? <ErrorBox error={error} /> : <p class="muted">Loading…</p>}
      </section>
    );
  }
  const s = task.status;
  const waiting = task.pending_approvals.length;
  const shownLogs = task.result?.execution_log.length ? task.result.execution_log : logs;
  return (
    <section class="detail" data-testid="task-detail" data-task-id={task.task_id} data-status={s}>
      <h2>
        <span class="mono">{task.task_id}</span> <StatusBadge task={task} /> <LiveBadge state={live} />
      </h2>
      <p class="muted">
        {task.instruction !== null ? `agent (${task.mode ?? 'code'})` : 'code'} · {task.language} · tenant{' '}
        {task.tenant}
        {task.session_id ? ` · session ${task.session_id}` : ''}
        {task.network_access ? (
          <span data-testid="network-access">
            {' '}
            · network {task.network_access.allow.join(', ')}
            {task.network_access.allow_http ? ' (http too)' : ''}
          </span>
        ) : null}{' '}
        · created {when(task.created_at)} · updated {when(task.updated_at)} · attempts {task.attempts}
        {!task.revision && (task.progress.tool_calls_carried ?? 0) > 0
          ? ` · ${plural(task.progress.tool_calls_carried ?? 0, 'tool call')} carried over from earlier steps`
          : ''}
      </p>
      {task.revision ? <RevisionBanner revision={task.revision} progress={task.progress} /> : null}
      {task.revised_by && task.revised_by.total > 0 ? <RevisedByBanner revisedBy={task.revised_by} /> : null}
      <div class="controls">
        <TaskControls
          task={task}
          busy={busy}
          onControl={(action) => void act(() => api.control(id, action))}
        />
        {waiting > 0 ? (
          <a href="#/approvals" data-testid="to-inbox">
            {plural(waiting, 'approval')} {noun(waiting, 'waits', 'wait')}: decide below or in the inbox
          </a>
        ) : null}
      </div>
      {s === 'paused' && waiting > 0 ? (
        <ApprovalDecision
          api={api}
          taskId={task.task_id}
          items={task.pending_approvals.map((a) => ({ ...a, approval_id: a.id }))}
          onDecided={done}
          testid="task-approvals"
          head={<h3>Waiting for approval</h3>}
        />
      ) : null}
      <WaitingActions api={api} task={task} onDone={done} />
      <ErrorBox error={actionError} testid="action-error" />
      <ErrorBox error={error} />
      {task.corrupt ? (
        <div class="error" role="alert" data-testid="task-corrupt">
          <strong>{task.corrupt.code}</strong> {task.corrupt.message} (the database was changed behind the
          service: what needs the damaged part is not shown)
        </div>
      ) : null}
      {/* A failed or cancelled task's error is where its result would be. */}
      {task.error && s !== 'failed' && s !== 'cancelled' ? (
        <div class="error" data-testid="task-error">
          <strong>{task.error.code}</strong> {task.error.message}
          {errorPlace(task.error)}
        </div>
      ) : null}
      {revisable(task) ? <ReviseForm api={api} task={task} /> : null}

      <h3>{task.instruction !== null ? 'Instruction' : 'Code'}</h3>
      {task.instruction !== null ? (
        <pre class="instruction" data-testid="instruction">
          {task.instruction}
        </pre>
      ) : (
        <Code code={task.code ?? ''} language={task.language} testid="code" />
      )}
      {task.answer_schema ? (
        <>
          <h3>Answer schema</h3>
          <pre class="instruction" data-testid="answer-schema">
            {JSON.stringify(task.answer_schema, null, 2)}
          </pre>
        </>
      ) : null}

      {task.budgets ? (
        <>
          <h3>Budgets</h3>
          <Budgets budgets={task.budgets} />
        </>
      ) : null}

      <h3>Result</h3>
      <TaskResult task={task} />

      <h3>Logs</h3>
      {shownLogs.length > 0 ? (
        <pre class="logs" data-testid="logs">
          {shownLogs.map((l) => `[${l.level}] ${l.message}`).join('\n')}
        </pre>
      ) : (
        <p class="muted">No output.</p>
      )}

      {task.artifacts.length > 0 ? (
        <>
          <h3>Artifacts</h3>
          <ul data-testid="artifacts">
            {task.artifacts.map((a) => (
              <li key={a.name}>
                <Artifact api={api} taskId={id} name={a.name} /> <span class="muted">{bytes(a.size)}</span>
              </li>
            ))}
          </ul>
          {task.artifacts.map((a) => {
            const type = shownImageType(a.name, a.size);
            // Keyed by the bytes' digest: a later run that replaced the file shows the new one.
            return type === null ? null : (
              <ArtifactImage key={`${a.name}:${a.sha256}`} api={api} taskId={id} name={a.name} type={type} />
            );
          })}
        </>
      ) : null}

      <h3>Tool calls</h3>
      <WaterfallView events={events} running={s === 'running'} />
      <h3>Timeline</h3>
      <Timeline events={events} language={task.language} />
    </section>
  );
}

/** A download through fetch (it needs the key), handed to the browser as a blob URL. */
function Artifact(props: { api: Api; taskId: string; name: string }): JSX.Element {
  const [error, setError] = useState<unknown>(null);
  const download = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    try {
      const blob = await props.api.artifact(props.taskId, props.name);
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = props.name.split('/').at(-1) ?? props.name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <a href="#" onClick={(e) => void download(e)} data-testid="artifact" data-name={props.name}>
        {props.name}
      </a>
      <ErrorBox error={error} />
    </>
  );
}
