import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import { pretty } from './format.ts';
import { noun, plural } from './plural.ts';
import { OriginLink } from './origin-link.tsx';
import type { RevisedByView, RevisionView, TaskView } from './types.ts';
import { useAction } from './use-action.ts';
import { go, taskHref } from './use-route.ts';

/** Whether a task can be revised: a code task that ended (succeeded, failed or cancelled). */
export const revisable = (task: TaskView): boolean =>
  task.instruction === null &&
  task.code !== null &&
  (task.status === 'succeeded' || task.status === 'failed' || task.status === 'cancelled');

/**
 * Edit and rerun (ADR 0034): the task's program in an editor; sent, it becomes a new task, a revision of this
 * one, which takes over the calls this one completed instead of running them again. The page then shows it.
 */
export function ReviseForm(props: { api: Api; task: TaskView }): JSX.Element {
  const { api, task } = props;
  const [open, setOpen] = useState(false);
  const [code, setCode] = useState(task.code ?? '');
  const [rerunReads, setRerunReads] = useState(false);
  const { busy, error, run } = useAction();
  const formId = `revise-${task.task_id}`;
  const submit = (e: Event): Promise<void> => {
    e.preventDefault();
    return run(async () => {
      const created = await api.revise(task.task_id, { code, ...(rerunReads ? { rerun_reads: true } : {}) });
      go(`tasks/${encodeURIComponent(created.task_id)}`);
    });
  };
  return (
    <div class="revise">
      <button
        type="button"
        class="secondary"
        aria-expanded={open}
        aria-controls={formId}
        onClick={() => setOpen(!open)}
        data-testid="edit-rerun"
      >
        Edit and rerun
      </button>
      {open ? (
        <form id={formId} class="submit" onSubmit={(e) => void submit(e)} data-testid="revise-form">
          <p class="muted">
            The program runs again as a new task. Calls this task (or the attempts before it) completed are
            taken over instead of run again when the new program makes them with the same arguments; a call
            that changes the world made with other arguments waits for a human.
          </p>
          <label>
            Revised program ({task.language})
            <textarea
              rows={Math.min(30, Math.max(6, code.split('\n').length + 1))}
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
              spellcheck={false}
              required
              data-testid="revise-code"
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={rerunReads}
              onChange={(e) => setRerunReads(e.currentTarget.checked)}
              data-testid="rerun-reads"
            />
            Rerun reads: read and idempotent calls run again for fresh values (calls with effects are still
            taken over)
          </label>
          <div class="row">
            <button type="submit" disabled={busy || code.trim() === ''} data-testid="revise-submit">
              Run the revision
            </button>
            <button type="button" class="secondary" onClick={() => setOpen(false)} disabled={busy}>
              Close
            </button>
          </div>
          <ErrorBox error={error} testid="revise-error" />
        </form>
      ) : null}
    </div>
  );
}

/**
 * What a revision took over: the task it revises, how many of the calls it was offered it took, and the calls
 * with effects that happened in an earlier attempt and were not made again (it never repeats or drops one
 * silently).
 */
export function RevisionBanner(props: {
  revision: RevisionView;
  progress: TaskView['progress'];
}): JSX.Element {
  const { revision: r } = props;
  return (
    <section
      class="revision"
      aria-label="Revision"
      data-testid="revision"
      data-carried={r.carried}
      data-offered={r.offered}
    >
      <p>
        Revision of{' '}
        <a href={taskHref(r.revision_of)} class="mono" data-testid="revision-of">
          {r.revision_of}
        </a>
        : <strong data-testid="revision-carried">{r.carried}</strong> of{' '}
        <span data-testid="revision-offered">{r.offered}</span> {noun(r.offered, 'call')} offered by earlier
        attempts carried over (not run again)
        {r.rerun_reads ? '; reads run again (rerun reads)' : ''}.
        {props.progress.tool_calls_carried !== undefined ? (
          <span class="muted">
            {' '}
            {plural(props.progress.tool_calls_completed, 'tool call')} completed,{' '}
            {props.progress.tool_calls_carried} of them carried over.
          </span>
        ) : null}
      </p>
      {r.not_repeated.length > 0 ? (
        <>
          <p>
            <strong>Already executed, not repeated:</strong> an earlier attempt made these calls; this
            revision did not make them again.
          </p>
          <ul data-testid="not-repeated">
            {r.not_repeated.map((c, i) => (
              <li key={i} data-testid="not-repeated-call" data-tool={c.tool}>
                <span class="mono">{c.tool}</span> in <OriginLink origin={c.origin} />
                <pre>{pretty(c.arguments)}</pre>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

/**
 * On a task that was revised: the tasks that revise it, each a link to its page, the newest last (so a failed
 * task's page leads to where the fix ran). Ids are shown as text, and in the links only URI-encoded.
 */
export function RevisedByBanner(props: { revisedBy: RevisedByView }): JSX.Element {
  const { task_ids: ids, total } = props.revisedBy;
  return (
    <section class="revision" aria-label="Revised by" data-testid="revised-by" data-total={total}>
      <p>
        Revised by{' '}
        {ids.map((id, i) => (
          <span key={id}>
            {i > 0 ? ', ' : ''}
            <a href={taskHref(id)} class="mono" data-testid="revised-by-link" data-task-id={id}>
              {id}
            </a>
          </span>
        ))}
        {total > ids.length ? (
          <span class="muted">
            {' '}
            (the newest {ids.length} of {plural(total, 'revision')})
          </span>
        ) : null}
        . {total === 1 ? 'It runs' : 'Each runs'} a fixed program as a new task, taking over the calls this
        task completed instead of running them again.
      </p>
    </section>
  );
}
