import type Database from 'better-sqlite3';
import { hasToken, longestRefusal, msUntilToken, refilledTokens, usageKeysOf } from '../../spec/index.ts';
import type { UsageKey, UsageRequest, UsageTaken } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

// UsageStore.takeUsage on SQLite (ADR 0045, 0044 amended): every key's bucket and quota read, then written only
// if none refuses, in one IMMEDIATE transaction, so the processes on one file take turns and a refused call
// changes nothing on any key.

interface BucketRow {
  readonly tokens: number;
  readonly updated_at: number;
}

interface QuotaRow {
  readonly period_start: number;
  readonly used: number;
}

type Refused = Extract<UsageTaken, { ok: false }>;

/** What one key would write, and why it refuses (nothing: it does not). */
interface Checked {
  readonly key: UsageKey;
  readonly tokens: number | null;
  readonly used: number | null;
  readonly refused: Refused[];
}

function check(db: Database.Database, r: UsageRequest, key: UsageKey): Checked {
  const refused: Refused[] = [];
  let tokens: number | null = null;
  if (key.rate) {
    const row = prepared(
      db,
      'SELECT tokens, updated_at FROM tool_rate_buckets WHERE tenant = ? AND tool = ?',
    ).get(r.tenant, key.tool) as BucketRow | undefined;
    tokens = row ? refilledTokens(row.tokens, row.updated_at, r.now, key.rate) : key.rate.burst;
    if (!hasToken(tokens))
      refused.push({
        ok: false,
        limit: 'rate',
        retryAfterMs: msUntilToken(tokens, key.rate),
        tool: key.tool,
      });
  }
  let used: number | null = null;
  if (key.quota) {
    const row = prepared(
      db,
      'SELECT period_start, used FROM tool_quota_counts WHERE tenant = ? AND tool = ?',
    ).get(r.tenant, key.tool) as QuotaRow | undefined;
    used = row?.period_start === key.quota.periodStart ? row.used : 0;
    if (used >= key.quota.max)
      refused.push({ ok: false, limit: 'quota', retryAfterMs: key.quota.periodEnd - r.now, tool: key.tool });
  }
  return { key, tokens, used, refused };
}

function take(db: Database.Database, r: UsageRequest, c: Checked): void {
  if (c.used !== null && c.key.quota) {
    prepared(
      db,
      `INSERT INTO tool_quota_counts (tenant, tool, period_start, used) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant, tool) DO UPDATE SET period_start = excluded.period_start, used = excluded.used`,
    ).run(r.tenant, c.key.tool, c.key.quota.periodStart, c.used + 1);
  }
  if (c.tokens !== null) {
    prepared(
      db,
      `INSERT INTO tool_rate_buckets (tenant, tool, tokens, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant, tool) DO UPDATE SET tokens = excluded.tokens,
         updated_at = max(tool_rate_buckets.updated_at, excluded.updated_at)`,
    ).run(r.tenant, c.key.tool, Math.max(0, c.tokens - 1), r.now);
  }
}

export function takeUsageRows(db: Database.Database, r: UsageRequest): UsageTaken {
  return db
    .transaction((): UsageTaken => {
      const checked = usageKeysOf(r).map((key) => check(db, r, key));
      const refused = checked.flatMap((c) => c.refused);
      if (refused.length > 0) return longestRefusal(refused);
      for (const c of checked) take(db, r, c);
      return { ok: true };
    })
    .immediate();
}
