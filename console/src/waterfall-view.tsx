import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { ms } from './format.ts';
import { plural } from './plural.ts';
import type { TaskEvent } from './types.ts';
import { waterfall } from './waterfall.ts';
import type { CallStatus, WaterfallCall } from './waterfall.ts';

const LABELS: Readonly<Record<CallStatus, string>> = {
  ok: 'ok',
  error: 'error',
  replayed: 'replayed',
  carried: 'carried over',
  'waiting-approval': 'waiting approval',
  'waiting-input': 'waiting input',
  running: 'running',
  unfinished: 'unfinished',
};

const pct = (n: number): string => `${Math.max(0, Math.min(100, n)).toFixed(3)}%`;

/**
 * The task's tool calls as bars on one time axis, from each call's start to its end: the calls of a Promise.all
 * overlap, sequential ones follow each other. A human's wait before an approved call is drawn apart from its run.
 */
export function WaterfallView(props: { events: readonly TaskEvent[]; running: boolean }): JSX.Element {
  const chart = useMemo(() => waterfall(props.events, props.running), [props.events, props.running]);
  if (chart.calls.length === 0) {
    return (
      <p class="muted" data-testid="waterfall-empty">
        No tool calls{props.running ? ' yet' : ''}.
      </p>
    );
  }
  const span = Math.max(1, chart.to - chart.from);
  const x = (t: number): number => ((t - chart.from) / span) * 100;
  return (
    <section class="waterfall" aria-label="Tool calls over time" data-testid="waterfall">
      <p class="muted" data-testid="waterfall-summary">
        {plural(chart.calls.length, 'tool call')} over {ms(chart.to - chart.from)}
        {chart.concurrency > 1 ? `, up to ${chart.concurrency} at once` : ''}
      </p>
      <ol class="wf">
        {chart.calls.map((c) => (
          <Row key={c.callId} call={c} x={x} />
        ))}
      </ol>
      <div class="wf-axis muted" aria-hidden="true">
        <span>0</span>
        <span>{ms(span)}</span>
      </div>
    </section>
  );
}

function Row(props: { call: WaterfallCall; x: (t: number) => number }): JSX.Element {
  const { call: c, x } = props;
  const took = c.status === 'carried' ? 'not run' : c.ended ? ms(c.end - c.start) : LABELS[c.status];
  const waited = c.start > c.askedAt;
  return (
    <li
      class={`wf-row wf-${c.status}`}
      data-testid="wf-call"
      data-call-id={c.callId}
      data-tool={c.tool}
      data-status={c.status}
      data-start={c.start}
      data-end={c.end}
    >
      <div class="wf-label">
        <span class="mono" title={c.callId}>
          {c.tool}
        </span>{' '}
        <span class="wf-duration" data-testid="wf-duration">
          {took}
        </span>{' '}
        <span class={`badge wf-status wf-status-${c.status}`}>{LABELS[c.status]}</span>
      </div>
      <div class="wf-track">
        {waited ? (
          <div
            class="wf-wait"
            style={{ left: pct(x(c.askedAt)), width: pct(x(c.start) - x(c.askedAt)) }}
            title={`waited ${ms(c.start - c.askedAt)} before it ran`}
          />
        ) : null}
        <div
          class="wf-bar"
          style={{ left: pct(x(c.start)), width: pct(x(c.end) - x(c.start)) }}
          title={`${c.tool} (${c.callId}): ${took}, ${LABELS[c.status]}`}
          data-testid="wf-bar"
        />
      </div>
    </li>
  );
}
