import type Database from 'better-sqlite3';
import { hasToken, msUntilToken, refilledTokens } from '../../spec/index.ts';
import type { UsageRequest, UsageTaken } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

// UsageStore.takeUsage on SQLite (ADR 0045): the bucket and the quota read and written in one IMMEDIATE
// transaction, so the processes on one file take turns and a refused call changes nothing.

interface BucketRow {
  readonly tokens: number;
  readonly updated_at: number;
}

interface QuotaRow {
  readonly period_start: number;
  readonly used: number;
}

export function takeUsageRows(db: Database.Database, r: UsageRequest): UsageTaken {
  return db
    .transaction((): UsageTaken => {
      let tokens: number | null = null;
      if (r.rate) {
        const row = prepared(
          db,
          'SELECT tokens, updated_at FROM tool_rate_buckets WHERE tenant = ? AND tool = ?',
        ).get(r.tenant, r.tool) as BucketRow | undefined;
        tokens = row ? refilledTokens(row.tokens, row.updated_at, r.now, r.rate) : r.rate.burst;
        if (!hasToken(tokens))
          return { ok: false, limit: 'rate', retryAfterMs: msUntilToken(tokens, r.rate) };
      }
      if (r.quota) {
        const row = prepared(
          db,
          'SELECT period_start, used FROM tool_quota_counts WHERE tenant = ? AND tool = ?',
        ).get(r.tenant, r.tool) as QuotaRow | undefined;
        const used = row?.period_start === r.quota.periodStart ? row.used : 0;
        if (used >= r.quota.max)
          return { ok: false, limit: 'quota', retryAfterMs: r.quota.periodEnd - r.now };
        prepared(
          db,
          `INSERT INTO tool_quota_counts (tenant, tool, period_start, used) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant, tool) DO UPDATE SET period_start = excluded.period_start, used = excluded.used`,
        ).run(r.tenant, r.tool, r.quota.periodStart, used + 1);
      }
      if (tokens !== null) {
        prepared(
          db,
          `INSERT INTO tool_rate_buckets (tenant, tool, tokens, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant, tool) DO UPDATE SET tokens = excluded.tokens,
             updated_at = max(tool_rate_buckets.updated_at, excluded.updated_at)`,
        ).run(r.tenant, r.tool, Math.max(0, tokens - 1), r.now);
      }
      return { ok: true };
    })
    .immediate();
}
