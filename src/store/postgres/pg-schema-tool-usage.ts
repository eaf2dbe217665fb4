// Version 2 of the PostgreSQL schema (SQLite's migration 19): per-tenant rate limits and quotas on tool calls
// (ADR 0045). `granted` says whether the row's last take got a token (what an upsert's RETURNING can tell).

export const SCHEMA_TOOL_USAGE = `
CREATE TABLE tool_rate_buckets (
  tenant text NOT NULL,
  tool text NOT NULL,
  tokens double precision NOT NULL,
  updated_at bigint NOT NULL,
  granted boolean NOT NULL DEFAULT true,
  PRIMARY KEY (tenant, tool)
);
CREATE TABLE tool_quota_counts (
  tenant text NOT NULL,
  tool text NOT NULL,
  period_start bigint NOT NULL,
  used integer NOT NULL,
  PRIMARY KEY (tenant, tool)
);
`;
