import type { JSX } from 'preact';
import { pretty } from './format.ts';
import type { TaskError, TaskView } from './types.ts';

/** Where in the program an error points, when it says: " (line 3, column 7)". */
export function errorPlace(error: TaskError): string {
  if (error.line === undefined) return '';
  return error.column === undefined
    ? ` (line ${error.line})`
    : ` (line ${error.line}, column ${error.column})`;
}

const UNFINISHED: Readonly<Record<string, string>> = {
  pending: 'queued: it runs when a slot is free',
  running: 'running',
  paused: 'paused',
};

/**
 * What the task gave, or what is true instead: not finished yet (and why), the error it failed with, or that it
 * was cancelled. A paused or failed task has a stored `output` of null that is no result; a succeeded one's null is.
 */
export function TaskResult(props: { task: TaskView }): JSX.Element {
  const { task } = props;
  const s = task.status;
  return (
    <div data-testid="result-section">
      {s === 'succeeded' ? (
        task.result ? (
          <pre data-testid="result">{pretty(task.result.output)}</pre>
        ) : (
          <p class="muted">No result.</p>
        )
      ) : s === 'failed' || s === 'cancelled' ? (
        <div class={s === 'failed' ? 'error' : 'notice'} data-testid="result-error">
          No result: the task {s === 'failed' ? 'failed' : 'was cancelled'}
          {task.error ? (
            <>
              {' '}
              with <strong>{task.error.code}</strong> {task.error.message}
              {errorPlace(task.error)}
            </>
          ) : null}
          .
        </div>
      ) : (
        <p class="muted" data-testid="result-pending">
          Not finished yet: {UNFINISHED[s] ?? s}
          {s === 'paused' && task.pause_reason ? ` (${task.pause_reason})` : ''}.
        </p>
      )}
      {task.result ? (
        <div class="table-scroll">
          <table class="resources" data-testid="resources">
            <tbody>
              <tr>
                <th>Wall time</th>
                <td>{task.result.resources_used.wall_time_s} s</td>
                <th>CPU time</th>
                <td>{task.result.resources_used.cpu_time_s} s</td>
                <th>Memory</th>
                <td>{task.result.resources_used.memory_mb} MiB</td>
                <th>Tool calls</th>
                <td>{task.result.resources_used.tool_calls}</td>
              </tr>
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}
