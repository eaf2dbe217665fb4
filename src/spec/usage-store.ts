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

/** One call of `tool` by `tenant` at `now` (epoch ms), under its rate limit, its quota, or both. */
export interface UsageRequest {
  readonly tenant: string;
  readonly tool: string;
  readonly rate?: BucketTerms;
  readonly quota?: QuotaTerms;
  readonly now: number;
}

/** Which limit refused a call. */
export type UsageLimitKind = 'rate' | 'quota';

export type UsageTaken =
  | { readonly ok: true }
  /** Nothing was taken; `retryAfterMs`: until a token is back, or until the quota's next period. */
  | { readonly ok: false; readonly limit: UsageLimitKind; readonly retryAfterMs: number };

export interface UsageStore {
  /**
   * Takes one token of the tenant's bucket of the tool and counts one call against its quota, atomically and all
   * or nothing: a refused call changes neither (a token is given back when the quota refuses). Atomic across the
   * processes sharing the database.
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
