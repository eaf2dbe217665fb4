import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { BarList, ThroughputChart } from './charts-view.tsx';
import type { BarRow } from './charts-view.tsx';
import { ErrorBox } from './error-box.tsx';
import { ms } from './format.ts';
import { plural } from './plural.ts';
import type { Overview, Quantiles } from './types.ts';
import type { Inbox } from './use-inbox.ts';
import { taskHref } from './use-route.ts';

/** How often the page reads the numbers again while it is shown. */
export const REFRESH_MS = 5000;

const WINDOWS: readonly { seconds: number; label: string }[] = [
  { seconds: 900, label: 'last 15 minutes' },
  { seconds: 3600, label: 'last hour' },
  { seconds: 6 * 3600, label: 'last 6 hours' },
  { seconds: 86_400, label: 'last day' },
];

/** Reads GET /stats/overview now and every REFRESH_MS, each read abortable, none overlapping. */
function useOverview(api: Api, windowSeconds: number): { data: Overview | null; error: unknown } {
  const [data, setData] = useState<Overview | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = (): void => {
      api
        .overview(windowSeconds, abort.signal)
        .then((o) => {
          setData(o);
          setError(null);
        })
        .catch((e: unknown) => !abort.signal.aborted && setError(e))
        .finally(() => {
          if (!abort.signal.aborted) timer = setTimeout(read, REFRESH_MS);
        });
    };
    read();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [api, windowSeconds]);
  return { data, error };
}

/** The operator's view: the service (or the key's tenant) over a window, read from the store (ADR 0054). */
export function Dashboard(props: { api: Api; inbox: Inbox }): JSX.Element {
  const [windowSeconds, setWindow] = useState(3600);
  const { data, error } = useOverview(props.api, windowSeconds);
  const label = WINDOWS.find((w) => w.seconds === windowSeconds)?.label ?? `last ${windowSeconds} s`;
  return (
    <section class="dashboard" data-testid="dashboard">
      <h2>Dashboard</h2>
      <p class="muted">
        <label>
          Over the{' '}
          <select
            data-testid="window"
            value={String(windowSeconds)}
            onChange={(e) => setWindow(Number((e.target as HTMLSelectElement).value))}
          >
            {WINDOWS.map((w) => (
              <option value={String(w.seconds)}>{w.label}</option>
            ))}
          </select>
        </label>{' '}
        {data ? (
          <span data-testid="scope">
            · {data.tenant === null ? 'every tenant' : `tenant ${data.tenant}`} · read{' '}
            {new Date(data.generated_at).toLocaleTimeString()}, again every {REFRESH_MS / 1000} s
          </span>
        ) : null}
      </p>
      <ErrorBox error={error} />
      {data === null ? (
        error ? null : (
          <p class="muted">Reading…</p>
        )
      ) : (
        <Numbers data={data} inbox={props.inbox} label={label} />
      )}
    </section>
  );
}

function Tile(props: { name: string; value: string | number; label: string }): JSX.Element {
  return (
    <div class="tile" data-testid={`stat-${props.name}`}>
      <span class="tile-value" data-testid="value">
        {props.value}
      </span>
      <span class="tile-label">{props.label}</span>
    </div>
  );
}

function Numbers(props: { data: Overview; inbox: Inbox; label: string }): JSX.Element {
  const { data: d, label } = props;
  const t = d.totals;
  const ended = t.succeeded + t.failed + t.cancelled;
  const nothing = ended === 0 && t.pending + t.running + t.paused === 0;
  const waiting = props.inbox.items ?? [];
  const approvalTasks = [...new Set(waiting.map((a) => a.task_id))];
  // The store's count (exact, like the other numbers); the links below are the inbox's first page.
  const awaitingApproval = d.pause_reasons.find((r) => r.reason === 'approval_required')?.count ?? 0;
  const tenants: BarRow[] = d.tenants.map((r) => ({
    key: r.tenant,
    label: r.tenant,
    parts: [
      { kind: 'pending', value: r.pending },
      { kind: 'running', value: r.running },
      { kind: 'paused', value: r.paused },
    ],
    text: `${r.pending} queued, ${r.running} running, ${r.paused} paused`,
  }));
  return (
    <>
      {d.capped.tasks || d.capped.tool_calls ? (
        <p class="muted" data-testid="capped">
          More happened in this window than one read covers: the numbers are of its newest part.
        </p>
      ) : null}
      {nothing ? (
        <p class="muted empty" data-testid="dashboard-empty">
          No task ran in the {label} and none is queued. <a href="#/submit">Submit a task</a> to see it here.
        </p>
      ) : null}
      <div class="tiles">
        <Tile name="throughput" value={d.throughput.per_minute} label="tasks ended / minute" />
        <Tile name="pending" value={t.pending} label="queued" />
        <Tile name="running" value={t.running} label="running" />
        <Tile name="paused" value={t.paused} label="paused" />
        <Tile name="approvals" value={awaitingApproval} label="waiting for approval" />
        <Tile name="failed" value={t.failed} label={`failed, ${label}`} />
      </div>

      <h3>Throughput</h3>
      <ThroughputChart
        buckets={d.throughput.buckets}
        bucketSeconds={d.throughput.bucket_seconds}
        title={`Tasks ended, ${label}: ${t.succeeded} succeeded, ${t.failed} failed, ${t.cancelled} cancelled`}
      />

      <h3>Latency, {label}</h3>
      <div class="table-scroll">
        <table data-testid="latency">
          <thead>
            <tr>
              <th>Of</th>
              <th>Count</th>
              <th>p50</th>
              <th>p99</th>
            </tr>
          </thead>
          <tbody>
            <LatencyRow name="tasks" label="Tasks (submitted to ended)" q={d.task_latency_ms} />
            <LatencyRow name="tools" label="Tool calls" q={d.tool_latency_ms} />
            {d.tools.map((tool) => (
              <LatencyRow key={tool.tool} name={`tool-${tool.tool}`} label={`· ${tool.tool}`} q={tool} />
            ))}
          </tbody>
        </table>
      </div>
      {d.tool_latency_ms.failed > 0 ? (
        <p class="muted" data-testid="tool-failures">
          {plural(d.tool_latency_ms.failed, 'tool call')} failed.
        </p>
      ) : null}

      <h3>Queue by tenant</h3>
      <BarList rows={tenants} empty="No task is queued, running or paused." testid="tenants" />
      {d.more_tenants > 0 ? <p class="muted">And {plural(d.more_tenants, 'more tenant')}.</p> : null}

      <h3>Pause reasons</h3>
      <BarList
        rows={d.pause_reasons.map((r) => ({
          key: r.reason,
          label: r.reason,
          parts: [{ kind: 'paused', value: r.count }],
          text: plural(r.count, 'task'),
        }))}
        empty="No task is paused."
        testid="pause-reasons"
      />

      <h3>Error codes, {label}</h3>
      <BarList
        rows={d.error_codes.map((r) => ({
          key: r.code,
          label: <code>{r.code}</code>,
          parts: [{ kind: 'failed', value: r.count }],
          text: plural(r.count, 'task'),
        }))}
        empty="No task failed."
        testid="error-codes"
      />

      <h3>Waiting for approval</h3>
      {approvalTasks.length === 0 ? (
        <p class="muted empty" data-testid="approvals-empty">
          Nothing waits for approval.
        </p>
      ) : (
        <>
          <ul data-testid="approval-links">
            {approvalTasks.map((id) => {
              const items = waiting.filter((a) => a.task_id === id);
              return (
                <li key={id}>
                  <a href={taskHref(id)} class="mono" data-testid="approval-link">
                    {id}
                  </a>{' '}
                  <span class="muted">
                    {items[0]?.tenant} · {items.map((a) => a.tool).join(', ')}
                  </span>
                </li>
              );
            })}
          </ul>
          <p>
            <a href="#/approvals" data-testid="open-inbox">
              Decide them in the inbox
            </a>
            {props.inbox.more ? <span class="muted"> (more wait than shown)</span> : null}
          </p>
        </>
      )}
    </>
  );
}

function LatencyRow(props: { name: string; label: string; q: Quantiles }): JSX.Element {
  const { q } = props;
  const show = (n: number | null): string => (n === null ? '–' : ms(n));
  return (
    <tr data-testid={`latency-${props.name}`}>
      <td>{props.label}</td>
      <td data-testid="count">{q.count}</td>
      <td data-testid="p50">{show(q.p50)}</td>
      <td data-testid="p99">{show(q.p99)}</td>
    </tr>
  );
}
