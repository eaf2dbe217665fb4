import { longestRefusal, msUntilToken, TOKEN_SLACK, usageKeysOf } from '../../spec/index.ts';
import type { BucketTerms, QuotaTerms, UsageKey, UsageRequest, UsageTaken } from '../../spec/index.ts';
import { oneNamed } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// UsageStore.takeUsage on PostgreSQL (ADR 0045, 0044 amended), in one transaction: the bucket's upsert refills
// and takes in SQL from the stored row (its lock orders the nodes), then the quota's. One key: a quota that
// refuses gives the token back (the row is still locked by this transaction, so nothing flowed in between).
// Several keys (a tool's and the tenant's all-tools key): a savepoint, rolled back when any key refuses.

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

type Refused = Extract<UsageTaken, { ok: false }>;

async function takeToken(
  sql: Sql,
  r: UsageRequest,
  key: UsageKey,
  rate: BucketTerms,
): Promise<Refused | null> {
  const row = await oneNamed<{ tokens: number; granted: boolean }>(sql, TAKE_TOKEN, [
    r.tenant,
    key.tool,
    rate.burst,
    r.now,
    rate.perSecond,
    1 - TOKEN_SLACK,
  ]);
  if (row === undefined) throw new Error('the token bucket upsert returned no row');
  return row.granted
    ? null
    : { ok: false, limit: 'rate', retryAfterMs: msUntilToken(row.tokens, rate), tool: key.tool };
}

async function countCall(
  sql: Sql,
  r: UsageRequest,
  key: UsageKey,
  quota: QuotaTerms,
): Promise<Refused | null> {
  const counted = await oneNamed<{ used: number }>(sql, COUNT_CALL, [
    r.tenant,
    key.tool,
    quota.periodStart,
    quota.max,
  ]);
  return counted === undefined
    ? { ok: false, limit: 'quota', retryAfterMs: quota.periodEnd - r.now, tool: key.tool }
    : null;
}

/**
 * Every key's bucket, then every key's count, each in key order (so two transactions lock rows in one order and
 * never wait in a cycle); when any refuses, everything this call wrote is rolled back to the savepoint.
 */
export async function takeUsageRows(sql: Sql, r: UsageRequest): Promise<UsageTaken> {
  const keys = usageKeysOf(r);
  const several = keys.length > 1;
  if (several) await sql.query('SAVEPOINT take_usage');
  const refused: Refused[] = [];
  for (const key of keys) {
    const no = key.rate ? await takeToken(sql, r, key, key.rate) : null;
    if (no) refused.push(no);
    // One key: its quota is not counted once its rate refused (nothing to roll back).
    if (no && !several) return no;
  }
  for (const key of keys) {
    const no = key.quota ? await countCall(sql, r, key, key.quota) : null;
    if (no) refused.push(no);
  }
  if (refused.length === 0) {
    if (several) await sql.query('RELEASE SAVEPOINT take_usage');
    return { ok: true };
  }
  if (several) await sql.query('ROLLBACK TO SAVEPOINT take_usage');
  else if (keys[0]?.rate) await sql.query(GIVE_BACK, [r.tenant, keys[0].tool]);
  return longestRefusal(refused);
}

const GIVE_BACK = 'UPDATE tool_rate_buckets SET tokens = tokens + 1 WHERE tenant = $1 AND tool = $2';
