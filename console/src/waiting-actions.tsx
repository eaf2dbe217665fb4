import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import { pretty } from './format.ts';
import { plural } from './plural.ts';
import { OriginLink } from './origin-link.tsx';
import type { TaskView } from './types.ts';
import { useAction } from './use-action.ts';

/**
 * What a paused task waits for besides approvals: an input (`input.wait(name)`), given as JSON; or, after a crash
 * left an unsafe call in doubt (`needs_attention`), whether to run it again, take a result for it, or fail; the
 * same for a revision's call held because an earlier attempt made it with other arguments (both are shown).
 */
export function WaitingActions(props: {
  api: Api;
  task: TaskView;
  onDone: (view: TaskView) => void;
}): JSX.Element | null {
  const { api, task } = props;
  const [value, setValue] = useState('');
  const { busy, error, run } = useAction();
  if (task.status !== 'paused') return null;
  const act = (work: () => Promise<TaskView>): Promise<void> =>
    run(async () => {
      props.onDone(await work());
      setValue('');
    });
  /** The typed JSON, or the error naming it: a value that is not JSON never goes out as a string by mistake. */
  const parsed = (): unknown => {
    try {
      return JSON.parse(value) as unknown;
    } catch (e) {
      throw new Error(`not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  };
  const input = task.pending_inputs[0];
  const attention = task.pause_reason === 'needs_attention' ? task.attention : null;
  // Every call in doubt is decided in one round (older servers name only the first).
  const calls = task.attention_calls ?? (attention ? [attention] : []);
  if (!input && !attention) return null;
  // Calls of a revision held beside an earlier attempt's (ADR 0034), not calls in doubt after a crash.
  const revised = calls.length > 0 && calls.every((c) => c.earlier !== undefined);
  return (
    <div class="waiting" data-testid="waiting">
      {input ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act(() => api.provideInput(task.task_id, input.name, parsed()));
          }}
        >
          <label>
            Input "{input.name}" (JSON){input.deadline ? `, before ${input.deadline}` : ''}
            <textarea
              rows={3}
              value={value}
              onInput={(e) => setValue(e.currentTarget.value)}
              data-testid="input-value"
              required
            />
          </label>
          <button type="submit" disabled={busy} data-testid="provide-input">
            Provide input
          </button>
        </form>
      ) : null}
      {attention ? (
        <div data-testid="attention">
          {revised ? (
            <p>
              {calls.length > 1
                ? `${plural(calls.length, 'call')} of this revision are`
                : 'A call of this revision is'}{' '}
              held: an earlier attempt already made {calls.length > 1 ? 'these calls' : 'this call'} with
              other arguments{calls.length > 1 ? '; what you choose applies to all of them' : ''}.
            </p>
          ) : calls.some((c) => c.earlier) ? (
            <p>
              {plural(calls.length, 'call')} wait for a decision (revised calls held beside earlier ones, and
              calls in doubt after a crash); what you choose applies to all of them:
            </p>
          ) : calls.length > 1 ? (
            <p>
              {plural(calls.length, 'call')} may or may not have run before a crash; what you choose applies
              to all of them:
            </p>
          ) : (
            <p>A call may or may not have run before a crash:</p>
          )}
          {calls.map((c) =>
            c.earlier ? (
              <div key={c.call_id} class="attention-pair" data-testid="attention-call" data-revised="true">
                <div>
                  <span class="label">
                    the revision calls <strong>{c.tool}</strong> ({c.call_id})
                  </span>
                  <pre data-testid="attention-args">{pretty(c.arguments)}</pre>
                </div>
                <div data-testid="attention-earlier">
                  <span class="label">
                    an earlier attempt already ran <strong>{c.earlier.tool}</strong> in{' '}
                    <OriginLink origin={c.earlier.origin} />
                  </span>
                  <pre data-testid="attention-earlier-args">{pretty(c.earlier.arguments)}</pre>
                </div>
              </div>
            ) : (
              <div key={c.call_id} data-testid="attention-call">
                <strong>{c.tool}</strong> ({c.call_id})<pre>{pretty(c.arguments)}</pre>
              </div>
            ),
          )}
          <button
            type="button"
            disabled={busy}
            onClick={() => void act(() => api.resolveAttention(task.task_id, { action: 'retry' }))}
            data-testid="attention-retry"
          >
            {revised ? 'Run the revised call' : 'Run it again'}
          </button>{' '}
          <label>
            Result to take instead (JSON)
            <input
              value={value}
              onInput={(e) => setValue(e.currentTarget.value)}
              data-testid="attention-result"
            />
          </label>
          <button
            type="button"
            disabled={busy || value.trim() === ''}
            onClick={() =>
              void act(() => api.resolveAttention(task.task_id, { action: 'skip', result: parsed() }))
            }
            data-testid="attention-skip"
          >
            Skip with this result
          </button>{' '}
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => void act(() => api.resolveAttention(task.task_id, { action: 'fail' }))}
            data-testid="attention-fail"
          >
            Fail the task
          </button>
        </div>
      ) : null}
      <ErrorBox error={error} testid="waiting-error" />
    </div>
  );
}
