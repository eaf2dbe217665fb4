import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import { pretty } from './format.ts';
import { plural } from './plural.ts';
import type { ToolItem } from './types.ts';

const APPROVAL: Readonly<Record<ToolItem['approval'], string>> = {
  never: 'no approval',
  always: 'every call needs approval',
  by_arguments: 'approval depends on the arguments',
};

/**
 * The tools a program here may call (GET /api/v1/tools): how to call each, what it does, its effect and whether
 * a human must approve its calls; `onAllow` puts a name in the form's allow-list (`allowed`).
 */
export function ToolList(props: {
  api: Api;
  allowed: readonly string[];
  onAllow: (name: string) => void;
}): JSX.Element {
  const [tools, setTools] = useState<readonly ToolItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const abort = new AbortController();
    props.api
      .tools(abort.signal)
      .then((r) => setTools(r.tools))
      .catch((e: unknown) => !abort.signal.aborted && setError(e));
    return () => abort.abort();
  }, [props.api]);
  return (
    <section class="tool-list" aria-label="Tools available" data-testid="tool-list">
      <h3>
        Tools available{' '}
        {tools ? (
          <span class="muted" data-testid="tool-count">
            ({plural(tools.length, 'tool')})
          </span>
        ) : null}
      </h3>
      <ErrorBox error={error} />
      {tools?.length === 0 ? (
        <p class="muted empty" data-testid="no-tools">
          This server offers no tools: programs compute but call nothing outside. Its operator adds them with{' '}
          <code>codecall serve --tools FILE</code>.
        </p>
      ) : null}
      <ul>
        {(tools ?? []).map((t) => (
          <li key={t.name} class="tool" data-testid="tool" data-name={t.name}>
            <div class="tool-head">
              <code>await {t.name}(…)</code> <span class="badge">{t.effect}</span>{' '}
              <span class="muted">{APPROVAL[t.approval]}</span>{' '}
              <button
                type="button"
                class="secondary small"
                disabled={props.allowed.includes(t.name)}
                onClick={() => props.onAllow(t.name)}
                title="Add it to the tools this task may call"
                data-testid="tool-allow"
              >
                {props.allowed.includes(t.name) ? 'Allowed' : 'Allow'}
              </button>
            </div>
            {t.description ? <p>{t.description}</p> : null}
            <details>
              <summary>Arguments (JSON Schema)</summary>
              <pre data-testid="tool-schema">{pretty(t.input_schema)}</pre>
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}
