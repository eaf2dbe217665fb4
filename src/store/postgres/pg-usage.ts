import { msUntilToken, TOKEN_SLACK } from '../../spec/index.ts';
import type { UsageRequest, UsageTaken } from '../../spec/index.ts';
import { oneNamed } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// UsageStore.takeUsage on PostgreSQL (ADR 0045), in one transaction: the bucket's upsert refills and takes in
// SQL from the stored row (its lock orders the nodes), then the quota's; a quota that refuses gives the token
// back (the row is still locked by this transaction, so nothing flowed in between).

/** The bucket's tokens at $4 (now), refilled since the stored `updated_at` at $5 tokens per second, capped at $3. */
const REFILLED =
  'least($3::float8, b.tokens + greatest(0, $4::bigint - b.updated_at)::float8 * $5::float8 / 1000)';

const TAKE_TOKEN = `
INSERT INTO tool_rate_buckets AS b (tenant, tool, tokens, updated_at, granted)
  VALUES ($1, $2, $3::float8 - 1, $4::bigint, true)
ON CONFLICT (tenant, tool) DO UPDATE SET
  tokens = CASE WHEN ${REFILLED} >= $6::float8 THEN greatest(0, ${REFILLED} - 1) ELSE ${REFILLED} END,
  updated_at = greatest(b.updated_at, EXCLUDED.updated_at),
  granted = ${REFILLED} >= $6::float8
RETURNING tokens, granted`;

/** Counts one call in the period starting at $3, unless $4 (max) were already counted in it. */
const COUNT_CALL = `
INSERT INTO tool_quota_counts AS q (tenant, tool, period_start, used) VALUES ($1, $2, $3::bigint, 1)
ON CONFLICT (tenant, tool) DO UPDATE SET
  used = CASE WHEN q.period_start = EXCLUDED.period_start THEN q.used + 1 ELSE 1 END,
  period_start = EXCLUDED.period_start
WHERE q.period_start <> EXCLUDED.period_start OR q.used < $4::integer
RETURNING used`;

const GIVE_BACK = 'UPDATE tool_rate_buckets SET tokens = tokens + 1 WHERE tenant = $1 AND tool = $2';

export async function takeUsageRows(sql: Sql, r: UsageRequest): Promise<UsageTaken> {
  let took = false;
  if (r.rate) {
    const row = await oneNamed<{ tokens: number; granted: boolean }>(sql, TAKE_TOKEN, [
      r.tenant,
      r.tool,
      r.rate.burst,
      r.now,
      r.rate.perSecond,
      1 - TOKEN_SLACK,
    ]);
    if (row === undefined) throw new Error('the token bucket upsert returned no row');
    if (!row.granted) return { ok: false, limit: 'rate', retryAfterMs: msUntilToken(row.tokens, r.rate) };
    took = true;
  }
  if (r.quota) {
    const counted = await oneNamed<{ used: number }>(sql, COUNT_CALL, [
      r.tenant,
      r.tool,
      r.quota.periodStart,
      r.quota.max,
    ]);
    if (counted === undefined) {
      if (took) await sql.query(GIVE_BACK, [r.tenant, r.tool]);
      return { ok: false, limit: 'quota', retryAfterMs: r.quota.periodEnd - r.now };
    }
  }
  return { ok: true };
}
