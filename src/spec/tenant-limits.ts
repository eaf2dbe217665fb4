import { CodecallError } from '../errors/index.ts';
import { isRecord } from './is-record.ts';
import { QUALIFIED_TOOL_NAME } from './tool-names.ts';
import { ALL_TOOLS_KEY } from './usage-store.ts';
import type { BucketTerms, QuotaTerms } from './usage-store.ts';

/**
 * The operator's per-tenant limits on tool calls over time (issue 21, ADR 0045): a rate limit is a token bucket
 * per tenant and tool, a quota a count of calls per calendar period (UTC). `*` stands for the tenants (or tools)
 * no other rule names; a call is under the most specific rule of each kind: (tenant, tool), (tenant, *),
 * (*, tool), then (*, *). A rule for the tool `all` (ALL_TOOLS_KEY) is one bucket or count over all of a
 * tenant's tools together (ADR 0044, amended 2026-12-07), which a call is under as well as under its tool's.
 */

export type RatePer = 'second' | 'minute' | 'hour';
export type QuotaPeriod = 'hour' | 'day' | 'month';

export const RATE_PERS: readonly RatePer[] = ['second', 'minute', 'hour'];
export const QUOTA_PERIODS: readonly QuotaPeriod[] = ['hour', 'day', 'month'];

const PER_SECONDS: Readonly<Record<RatePer, number>> = { second: 1, minute: 60, hour: 3600 };

/** `rate` calls per `per`, up to `burst` at once (default: `rate`, at least 1). */
export interface ToolRateLimit {
  readonly tenant: string;
  readonly tool: string;
  readonly rate: number;
  readonly per: RatePer;
  readonly burst?: number;
}

/** At most `max` calls per `period` (UTC calendar: the hour, the day, the month). */
export interface ToolQuota {
  readonly tenant: string;
  readonly tool: string;
  readonly max: number;
  readonly period: QuotaPeriod;
}

/** Every rule the operator configured. */
export interface TenantToolLimits {
  readonly rateLimits: readonly ToolRateLimit[];
  readonly quotas: readonly ToolQuota[];
}

/** The rules a call of one tool by one tenant is under (at most one of each kind, and of each over all tools). */
export interface ToolLimitsOfCall {
  readonly rate?: ToolRateLimit;
  readonly quota?: ToolQuota;
  /** The tenant's rules over all of its tools together (tool `all`). */
  readonly allTools?: { readonly rate?: ToolRateLimit; readonly quota?: ToolQuota };
}

/** The most rules of each kind (a list the operator writes by hand). */
export const MAX_LIMIT_RULES = 10_000;

function invalid(field: string, message: string): never {
  throw new CodecallError('INVALID_ARGUMENT', `${field} ${message}`, { details: { field } });
}

function known(field: string, value: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) invalid(field, `has an unknown key "${key}" (known: ${keys.join(', ')})`);
  }
}

function tenantOf(field: string, v: unknown): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 200)
    invalid(`${field}.tenant`, 'must be a tenant (1-200 characters) or "*"');
  return v;
}

function toolOf(field: string, v: unknown): string {
  if (v === '*' || v === ALL_TOOLS_KEY) return v;
  if (typeof v !== 'string' || !QUALIFIED_TOOL_NAME.test(v))
    invalid(
      `${field}.tool`,
      'must be "namespace.name", as programs call the tool, "*" (each tool) or "all" (all tools together)',
    );
  if (v.startsWith('egress.') || v.startsWith('input.'))
    invalid(`${field}.tool`, "is not a tool of the task's: fetch and input.wait are not limited here");
  return v;
}

function oneOf<T extends string>(field: string, v: unknown, values: readonly T[]): T {
  if (!values.includes(v as T)) invalid(field, `must be one of ${values.join(', ')}`);
  return v as T;
}

function list(field: string, v: unknown): readonly unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) invalid(field, 'must be a list of rules');
  if (v.length > MAX_LIMIT_RULES) invalid(field, `may hold at most ${MAX_LIMIT_RULES} rules`);
  return v;
}

function unique(field: string, seen: Set<string>, tenant: string, tool: string): void {
  const key = JSON.stringify([tenant, tool]);
  if (seen.has(key)) invalid(field, `names tenant "${tenant}" and tool "${tool}" twice`);
  seen.add(key);
}

/** Rate limits as configured, checked: INVALID_ARGUMENT naming the rule's field (`toolRateLimits[2].rate`). */
export function parseToolRateLimits(value: unknown, field = 'toolRateLimits'): ToolRateLimit[] {
  const seen = new Set<string>();
  return list(field, value).map((raw, i) => {
    const at = `${field}[${i}]`;
    if (!isRecord(raw)) invalid(at, 'must be an object { tenant, tool, rate, per, burst }');
    known(at, raw, ['tenant', 'tool', 'rate', 'per', 'burst']);
    const tenant = tenantOf(at, raw.tenant);
    const tool = toolOf(at, raw.tool);
    unique(field, seen, tenant, tool);
    const { rate, burst } = raw;
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0 || rate > 1e9)
      invalid(`${at}.rate`, 'must be a number of calls above 0');
    const per = oneOf(`${at}.per`, raw.per, RATE_PERS);
    if (
      burst !== undefined &&
      (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1 || burst > 1e9)
    )
      invalid(`${at}.burst`, 'must be a number of calls, 1 or more');
    return { tenant, tool, rate, per, ...(burst === undefined ? {} : { burst: burst }) };
  });
}

/** Quotas as configured, checked: INVALID_ARGUMENT naming the rule's field (`toolQuotas[0].period`). */
export function parseToolQuotas(value: unknown, field = 'toolQuotas'): ToolQuota[] {
  const seen = new Set<string>();
  return list(field, value).map((raw, i) => {
    const at = `${field}[${i}]`;
    if (!isRecord(raw)) invalid(at, 'must be an object { tenant, tool, max, period }');
    known(at, raw, ['tenant', 'tool', 'max', 'period']);
    const tenant = tenantOf(at, raw.tenant);
    const tool = toolOf(at, raw.tool);
    unique(field, seen, tenant, tool);
    const { max } = raw;
    if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0)
      invalid(`${at}.max`, 'must be an integer of 0 or more');
    return { tenant, tool, max, period: oneOf(`${at}.period`, raw.period, QUOTA_PERIODS) };
  });
}

/** The most specific rule of `rules` for the call: (tenant, tool), (tenant, *), (*, tool), (*, *). */
function mostSpecific<R extends { readonly tenant: string; readonly tool: string }>(
  rules: readonly R[],
  tenant: string,
  tool: string,
): R | undefined {
  let best: R | undefined;
  let rank = 0;
  for (const rule of rules) {
    const t = rule.tenant === tenant ? 2 : rule.tenant === '*' ? 0 : -1;
    const n = rule.tool === tool ? 1 : rule.tool === '*' ? 0 : -1;
    if (t < 0 || n < 0) continue;
    const r = t + n + 1;
    if (r > rank) [best, rank] = [rule, r];
  }
  return best;
}

/** The tenant's rule over all of its tools together: its own, else the `*` tenants'. */
function allToolsRule<R extends { readonly tenant: string; readonly tool: string }>(
  rules: readonly R[],
  tenant: string,
): R | undefined {
  let star: R | undefined;
  for (const rule of rules) {
    if (rule.tool !== ALL_TOOLS_KEY) continue;
    if (rule.tenant === tenant) return rule;
    if (rule.tenant === '*') star = rule;
  }
  return star;
}

/** The rules a call of `tool` (`namespace.name`) by `tenant` is under; null when none. */
export function limitsOfCall(
  limits: TenantToolLimits,
  tenant: string,
  tool: string,
): ToolLimitsOfCall | null {
  const rate = mostSpecific(limits.rateLimits, tenant, tool);
  const quota = mostSpecific(limits.quotas, tenant, tool);
  const allRate = allToolsRule(limits.rateLimits, tenant);
  const allQuota = allToolsRule(limits.quotas, tenant);
  const all =
    allRate || allQuota
      ? { allTools: { ...(allRate ? { rate: allRate } : {}), ...(allQuota ? { quota: allQuota } : {}) } }
      : {};
  if (rate === undefined && quota === undefined && !('allTools' in all)) return null;
  return { ...(rate ? { rate } : {}), ...(quota ? { quota } : {}), ...all };
}

/** Whether any rule is configured (else nothing is checked and nothing costs). */
export function hasToolLimits(limits: TenantToolLimits | undefined): limits is TenantToolLimits {
  return limits !== undefined && (limits.rateLimits.length > 0 || limits.quotas.length > 0);
}

/** A rate limit as the bucket the store keeps. */
export function bucketOf(limit: ToolRateLimit): BucketTerms {
  return { perSecond: limit.rate / PER_SECONDS[limit.per], burst: limit.burst ?? Math.max(1, limit.rate) };
}

/** The calendar period (UTC) holding `now`, [start, end) in epoch ms. */
export function periodOf(now: number, period: QuotaPeriod): { readonly start: number; readonly end: number } {
  if (period === 'month') {
    const d = new Date(now);
    const [y, m] = [d.getUTCFullYear(), d.getUTCMonth()];
    return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
  }
  const size = period === 'hour' ? 3_600_000 : 86_400_000;
  const start = Math.floor(now / size) * size;
  return { start, end: start + size };
}

/** A quota at `now` as the store counts it. */
export function quotaTermsOf(quota: ToolQuota, now: number): QuotaTerms {
  const { start, end } = periodOf(now, quota.period);
  return { max: quota.max, periodStart: start, periodEnd: end };
}

/** Seconds to wait, as the guest's error gives them: milliseconds rounded up, at most 3 decimals. */
export function retryAfterSeconds(ms: number): number {
  return Math.ceil(Math.max(0, ms)) / 1000;
}
