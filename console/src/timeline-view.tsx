import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { pretty, when } from './format.ts';
import { Code } from './highlight.tsx';
import { OriginLink } from './origin-link.tsx';
import { timeline } from './timeline.ts';
import type { TaskEvent } from './types.ts';

export function Timeline(props: { events: readonly TaskEvent[]; language: string }): JSX.Element {
  const items = useMemo(() => timeline(props.events), [props.events]);
  if (items.length === 0) return <p class="muted">Nothing journaled yet.</p>;
  return (
    <ol class="timeline" data-testid="timeline">
      {items.map((item) => {
        const carried = item.call?.carried;
        return (
          <li
            key={item.key}
            class={`tl tl-${item.kind}${carried ? ' tl-carried' : ''}`}
            data-testid={`tl-${item.kind}`}
          >
            <div class="tl-head">
              <span class="tl-title">
                {item.title}
                {carried ? (
                  <>
                    {' '}
                    <span class="badge carried" data-testid="carried-badge">
                      carried over
                    </span>
                  </>
                ) : null}
              </span>
              <span class="muted tl-at">{when(item.at)}</span>
            </div>
            {item.detail ? <pre class="tl-detail">{item.detail}</pre> : null}
            {item.code ? <Code code={item.code} language={props.language} /> : null}
            {item.kind === 'carry' && item.earlier ? (
              <details>
                <summary>The calls offered</summary>
                <ul data-testid="offers">
                  {item.earlier.map((o, i) => (
                    <li key={i}>
                      <span class="mono">{o.tool}</span>, ran in <OriginLink origin={o.origin} />
                    </li>
                  ))}
                </ul>
              </details>
            ) : item.earlier ? (
              item.earlier.map((o, i) => (
                <div key={i} class="earlier" data-testid="earlier-call">
                  <span class="label">
                    earlier call: <span class="mono">{o.tool}</span> in <OriginLink origin={o.origin} />
                  </span>
                  <pre>{pretty(o.arguments)}</pre>
                </div>
              ))
            ) : null}
            {item.call ? (
              <div
                class="call"
                data-testid="tool-call"
                data-tool={item.call.tool}
                data-carried={carried ? 'true' : undefined}
              >
                <div>
                  <span class="label">arguments</span>
                  <pre data-testid="call-args">{pretty(item.call.arguments)}</pre>
                </div>
                <div>
                  <span class="label">
                    {item.call.ok === null ? 'waiting' : item.call.ok ? 'result' : 'error'}
                    {item.call.duration ? ` · ${item.call.duration}` : ''}
                    {carried ? ' · not run again, taken over from ' : ''}
                    {carried ? <OriginLink origin={carried} /> : null}
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
        );
      })}
    </ol>
  );
}
