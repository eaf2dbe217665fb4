import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { pretty, when } from './format.ts';
import { Code } from './highlight.tsx';
import { timeline } from './timeline.ts';
import type { TaskEvent } from './types.ts';

export function Timeline(props: { events: readonly TaskEvent[]; language: string }): JSX.Element {
  const items = useMemo(() => timeline(props.events), [props.events]);
  if (items.length === 0) return <p class="muted">Nothing journaled yet.</p>;
  return (
    <ol class="timeline" data-testid="timeline">
      {items.map((item) => (
        <li key={item.key} class={`tl tl-${item.kind}`} data-testid={`tl-${item.kind}`}>
          <div class="tl-head">
            <span class="tl-title">{item.title}</span>
            <span class="muted tl-at">{when(item.at)}</span>
          </div>
          {item.detail ? <pre class="tl-detail">{item.detail}</pre> : null}
          {item.code ? <Code code={item.code} language={props.language} /> : null}
          {item.call ? (
            <div class="call" data-testid="tool-call" data-tool={item.call.tool}>
              <div>
                <span class="label">arguments</span>
                <pre data-testid="call-args">{pretty(item.call.arguments)}</pre>
              </div>
              <div>
                <span class="label">
                  {item.call.ok === null ? 'waiting' : item.call.ok ? 'result' : 'error'}
                  {item.call.duration ? ` · ${item.call.duration}` : ''}
                </span>
                {item.call.ok === null ? null : (
                  <pre data-testid="call-result" class={item.call.ok ? '' : 'bad'}>
                    {pretty(item.call.outcome)}
                  </pre>
                )}
              </div>
            </div>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
