import type { StoreOptions } from './task-store.ts';

/**
 * The state of per-tenant rate limits and quotas (ADR 0045), kept in the store so that it holds across restarts
 * and across servers. Both stores implement it (SQLite: one IMMEDIATE transaction; PostgreSQL: upserts in one
 * transaction, the refill computed in SQL from the stored row).
 */

/** A token bucket: `perSecond` tokens flow in, at most `burst` are held; a call takes one. */
export interface BucketTerms {
  readonly perSecond: number;
  /** 1 or more. */
  readonly burst: number;
}

/** A quota: at most `max` calls in the period [start, end) (epoch ms); the count starts over in the next one. */
export interface QuotaTerms {
  /** 1 or more (a quota of 0 refuses without asking the store). */
  readonly max: number;
  readonly periodStart: number;
  readonly periodEnd: number;
}

/** One key's bucket and count: a tool's, or ALL_TOOLS_KEY for a limit over all of a tenant's tools together. */
export interface UsageKey {
  readonly tool: string;
  readonly rate?: BucketTerms;
  readonly quota?: QuotaTerms;
}

/**
 * One call of `tool` by `tenant` at `now` (epoch ms), under its rate limit, its quota, or both; and under the
 * keys of `also` (the tenant's all-tools key), taken with it in one step, all or none.
 */
export interface UsageRequest extends UsageKey {
  readonly tenant: string;
  readonly now: number;
  readonly also?: readonly UsageKey[];
}

/** The store's key of a tenant's limits over all of its tools together (no tool is named so: no dot). */
export const ALL_TOOLS_KEY = 'all';

/** Which limit refused a call. */
export type UsageLimitKind = 'rate' | 'quota';

export type UsageTaken =
  | { readonly ok: true }
  /**
   * Nothing was taken; `retryAfterMs`: until a token is back, or until the quota's next period; `tool`: the key
   * that refused (the longest wait when several did).
   */
  | {
      readonly ok: false;
      readonly limit: UsageLimitKind;
      readonly retryAfterMs: number;
      readonly tool: string;
    };

export interface UsageStore {
  /**
   * Takes one token of the tenant's bucket of the tool and counts one call against its quota, and the same of
   * every key of `also`, atomically and all or nothing: a refused call changes nothing on any key. Atomic across
   * the processes sharing the database.
   */
  takeUsage(request: UsageRequest, options?: StoreOptions): Promise<UsageTaken>;
}

/** Whether a store keeps usage (both of ours do; a store of someone else's may not). */
export function isUsageStore(store: object): store is UsageStore {
  return typeof (store as Partial<UsageStore>).takeUsage === 'function';
}

/**
 * Floating point refills (1/60 of a token per second, for a minute) must reach a whole token when they should: a
 * token short by less than this counts as there.
 */
export const TOKEN_SLACK = 1e-9;

/** The tokens in a bucket at `now`, refilled since `updatedAt` (a clock that went back adds nothing). */
export function refilledTokens(tokens: number, updatedAt: number, now: number, terms: BucketTerms): number {
  return Math.min(terms.burst, tokens + (Math.max(0, now - updatedAt) * terms.perSecond) / 1000);
}

/** Whether a bucket holding `tokens` (refilled) has one to give. */
export function hasToken(tokens: number): boolean {
  return tokens >= 1 - TOKEN_SLACK;
}

/** Milliseconds until a bucket holding `tokens` (refilled, less than one) holds one; at least 1. */
export function msUntilToken(tokens: number, terms: BucketTerms): number {
  return Math.max(1, Math.ceil(((1 - tokens) / terms.perSecond) * 1000));
}

/**
 * The keys of a request that limit something, each once, in the order rows are locked (by name: two requests never
 * wait for each other in a cycle).
 */
export function usageKeysOf(request: UsageRequest): UsageKey[] {
  const keys = new Map<string, UsageKey>();
  for (const key of [request, ...(request.also ?? [])]) {
    if ((key.rate || key.quota) && !keys.has(key.tool)) keys.set(key.tool, key);
  }
  return [...keys.values()].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}

/** The refusal to report of several: the longest wait (a shorter one would only be refused again). */
export function longestRefusal(refusals: readonly Extract<UsageTaken, { ok: false }>[]): UsageTaken {
  let worst = refusals[0];
  for (const r of refusals) if (worst === undefined || r.retryAfterMs > worst.retryAfterMs) worst = r;
  return worst ?? { ok: true };
}
