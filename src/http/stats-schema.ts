// The response schema of GET /api/v1/stats/overview (stats-overview.ts builds the answer).
import { nullable, open, timestamp } from './schema-parts.ts';

const int = { type: 'integer' } as const;
const obj = <P extends Record<string, unknown>>(description: string, properties: P) =>
  ({ type: 'object', description, ...open, properties }) as const;
const list = <P extends Record<string, unknown>>(description: string, properties: P) =>
  ({ type: 'array', description, items: { type: 'object', ...open, properties } }) as const;
const quantiles = {
  count: int,
  p50: { ...nullable('number'), description: 'Milliseconds (nearest rank); null: nothing measured' },
  p99: nullable('number'),
} as const;

export const statsResponse = {
  200: obj('The service (or the tenant) over the window', {
    generated_at: timestamp,
    window_seconds: int,
    tenant: { ...nullable('string'), description: 'The tenant covered; null: every tenant (an admin key)' },
    throughput: obj('Tasks that ended in the window, in 60 equal buckets', {
      bucket_seconds: { type: 'number' },
      per_minute: { type: 'number' },
      buckets: list('Oldest first', { start: timestamp, succeeded: int, failed: int, cancelled: int }),
    }),
    totals: obj('Unended tasks now; ended ones in the window', {
      pending: int,
      running: int,
      paused: int,
      succeeded: int,
      failed: int,
      cancelled: int,
    }),
    tenants: list('Unended tasks per tenant, the busiest first (at most 50)', {
      tenant: { type: 'string' },
      pending: int,
      running: int,
      paused: int,
    }),
    more_tenants: int,
    pause_reasons: list('Paused tasks by reason', { reason: { type: 'string' }, count: int }),
    error_codes: list('Tasks that failed in the window, by error code', {
      code: { type: 'string' },
      count: int,
    }),
    task_latency_ms: obj('From creation to end, of the tasks that ended in the window', quantiles),
    tool_latency_ms: obj('From intent to outcome, of the tool calls that ran live in the window', {
      ...quantiles,
      failed: int,
    }),
    tools: list('Tool calls by tool, the most called first (at most 50)', {
      tool: { type: 'string' },
      ...quantiles,
      failed: int,
    }),
    capped: obj("Whether a bound of the store's read was reached (the numbers are then of the newest part)", {
      tasks: { type: 'boolean' },
      tool_calls: { type: 'boolean' },
    }),
  }),
} as const;
