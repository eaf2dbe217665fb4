import type { JSX } from 'preact';
import { CHART, share, stackedBars } from './charts.ts';
import { plural } from './plural.ts';
import type { ThroughputBucket } from './types.ts';

const time = (iso: string): string =>
  new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

const describeBucket = (b: ThroughputBucket): string =>
  [
    b.succeeded ? `${b.succeeded} succeeded` : '',
    b.failed ? `${b.failed} failed` : '',
    b.cancelled ? `${b.cancelled} cancelled` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');

/**
 * Tasks ended per bucket as stacked bars (an SVG image with its title and a summary as its description), and the
 * same numbers as a table for whoever does not see the chart.
 */
export function ThroughputChart(props: {
  buckets: readonly ThroughputBucket[];
  bucketSeconds: number;
  title: string;
}): JSX.Element {
  const { bars, max } = stackedBars(props.buckets);
  const ended = bars.reduce((n, b) => n + b.total, 0);
  const per = props.bucketSeconds === 60 ? 'minute' : `${Math.round(props.bucketSeconds / 60)} minutes`;
  const summary =
    ended === 0 ? 'No task ended.' : `${plural(ended, 'task')} ended; at most ${max} in one ${per}.`;
  return (
    <figure class="chart" data-testid="throughput-chart">
      <svg
        viewBox={`0 0 ${CHART.width} ${CHART.height}`}
        preserveAspectRatio="none"
        role="img"
        aria-labelledby="throughput-title throughput-desc"
      >
        <title id="throughput-title">{props.title}</title>
        <desc id="throughput-desc">{summary}</desc>
        <line class="axis" x1="0" y1={CHART.height} x2={CHART.width} y2={CHART.height} />
        {bars.map((bar) => (
          <g key={bar.bucket.start} data-testid="throughput-bar" data-total={bar.total}>
            <title>{`${time(bar.bucket.start)}: ${describeBucket(bar.bucket)}`}</title>
            {bar.parts.map((p) => (
              <rect class={`bar-${p.kind}`} x={bar.x} y={p.y} width={bar.width} height={p.height} />
            ))}
          </g>
        ))}
      </svg>
      <figcaption class="chart-axis muted">
        <span>{props.buckets[0] ? time(props.buckets[0].start) : ''}</span>
        <span data-testid="throughput-summary">{summary}</span>
        <span>now</span>
      </figcaption>
      {bars.length > 0 ? (
        <details>
          <summary>As a table</summary>
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th>From</th>
                  <th>Succeeded</th>
                  <th>Failed</th>
                  <th>Cancelled</th>
                </tr>
              </thead>
              <tbody>
                {bars.map((b) => (
                  <tr key={b.bucket.start}>
                    <td>{time(b.bucket.start)}</td>
                    <td>{b.bucket.succeeded}</td>
                    <td>{b.bucket.failed}</td>
                    <td>{b.bucket.cancelled}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      ) : null}
    </figure>
  );
}

export interface BarRow {
  readonly key: string;
  readonly label: JSX.Element | string;
  /** Drawn stacked, in this order; their sum is the row's value. */
  readonly parts: readonly { readonly kind: string; readonly value: number }[];
  /** What the value says in words ("3 pending, 1 running"). */
  readonly text: string;
}

/**
 * Labelled horizontal bars: each row's label and its numbers in words are text (read as they are), the bar beside
 * them is drawn for the eye alone (aria-hidden). Empty: the `empty` text.
 */
export function BarList(props: { rows: readonly BarRow[]; empty: string; testid: string }): JSX.Element {
  if (props.rows.length === 0) {
    return (
      <p class="muted empty" data-testid={`${props.testid}-empty`}>
        {props.empty}
      </p>
    );
  }
  const total = (r: BarRow): number => r.parts.reduce((n, p) => n + p.value, 0);
  const max = Math.max(...props.rows.map(total));
  return (
    <ul class="bar-list" data-testid={props.testid}>
      {props.rows.map((r) => {
        let x = 0;
        return (
          <li key={r.key} data-testid={`${props.testid}-row`} data-key={r.key} data-value={total(r)}>
            <span class="bar-label">{r.label}</span>
            <span class="bar-text">{r.text}</span>
            <svg class="bar-track" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true">
              {r.parts.map((p) => {
                const width = (share(total(r), max) * p.value) / Math.max(1, total(r));
                const rect = <rect class={`bar-${p.kind}`} x={x} y="0" width={width} height="6" />;
                x += width;
                return rect;
              })}
            </svg>
          </li>
        );
      })}
    </ul>
  );
}
