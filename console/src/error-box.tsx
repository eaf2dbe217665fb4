import type { JSX } from 'preact';
import { ApiError } from './api.ts';

/** An error as the API gave it: its code and message (and the field at fault), never swallowed. */
export function ErrorBox(props: { error: unknown; testid?: string }): JSX.Element | null {
  const e = props.error;
  if (e === null || e === undefined) return null;
  const code = e instanceof ApiError ? e.code : 'ERROR';
  const message = e instanceof Error ? e.message : typeof e === 'string' ? e : JSON.stringify(e);
  const field = e instanceof ApiError && typeof e.details.field === 'string' ? e.details.field : null;
  return (
    <div class="error" role="alert" data-testid={props.testid ?? 'error'}>
      <strong>{code}</strong> {message}
      {field ? <span class="muted"> (field {field})</span> : null}
    </div>
  );
}
