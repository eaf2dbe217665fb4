import { failure } from '../errors/index.ts';
import {
  ALL_TOOLS_KEY,
  bucketOf,
  isTaskToolNamespace,
  limitsOfCall,
  quotaTermsOf,
  retryAfterSeconds,
} from '../spec/index.ts';
import type {
  BucketTerms,
  HostCall,
  QuotaTerms,
  SerializedError,
  TenantLimitName,
  TenantToolLimits,
  ToolLimitsOfCall,
  ToolQuota,
  ToolRateLimit,
  UsageStore,
  UsageTaken,
} from '../spec/index.ts';
import { RUN } from './budget-ledger.ts';
import type { Admission } from './budget-ledger.ts';

export interface TenantLimitGateOptions {
  /** Where the buckets and counts live (the task store): shared by every server on it, kept across restarts. */
  readonly store: UsageStore;
  readonly tenant: string;
  readonly limits: TenantToolLimits;
  /** Epoch ms. */
  readonly clock: () => number;
}

/**
 * A tenant's rate limits and quotas on its task's new calls (ADR 0045), asked of the store for a live call after
 * the task's budgets admitted it and before its intent is journaled: a refused call runs nothing and takes
 * nothing. Calls of tools no rule covers never reach the store.
 */
export class TenantLimitGate {
  /** The rules each tool's calls are under (null: none), by `namespace.name`. */
  private readonly rules = new Map<string, ToolLimitsOfCall | null>();

  constructor(private readonly options: TenantLimitGateOptions) {}

  /** The rules a call is under; null when none (timers, input.wait and fetch's requests are never limited). */
  limitsOf(call: HostCall): ToolLimitsOfCall | null {
    if (call.kind !== 'tool' || !isTaskToolNamespace(call.namespace)) return null;
    const tool = `${call.namespace}.${call.name}`;
    let rules = this.rules.get(tool);
    if (rules === undefined) {
      rules = limitsOfCall(this.options.limits, this.options.tenant, tool);
      this.rules.set(tool, rules);
    }
    return rules;
  }

  /**
   * Takes the call's token and counts it against its quota, and the same of the tenant's all-tools key, all or
   * none; or refuses it; rejects when the store fails.
   */
  async admit(
    call: HostCall & { kind: 'tool' },
    rules: ToolLimitsOfCall,
    signal: AbortSignal,
  ): Promise<Admission> {
    const tool = `${call.namespace}.${call.name}`;
    const now = this.options.clock();
    const all = rules.allTools;
    // A quota of 0 refuses every call: nothing to count.
    if (rules.quota?.max === 0)
      return quotaRefusal(tool, rules.quota, quotaTermsOf(rules.quota, now).periodEnd - now, false);
    if (all?.quota?.max === 0)
      return quotaRefusal(tool, all.quota, quotaTermsOf(all.quota, now).periodEnd - now, true);
    const taken = await this.options.store.takeUsage(
      {
        tenant: this.options.tenant,
        tool,
        now,
        ...keyTerms(rules, now),
        ...(all ? { also: [{ tool: ALL_TOOLS_KEY, ...keyTerms(all, now) }] } : {}),
      },
      { signal },
    );
    return refusalOf(taken, tool, rules);
  }
}

function keyTerms(
  rules: { readonly rate?: ToolRateLimit; readonly quota?: ToolQuota },
  now: number,
): { rate?: BucketTerms; quota?: QuotaTerms } {
  return {
    ...(rules.rate ? { rate: bucketOf(rules.rate) } : {}),
    ...(rules.quota ? { quota: quotaTermsOf(rules.quota, now) } : {}),
  };
}

function refusalOf(taken: UsageTaken, tool: string, rules: ToolLimitsOfCall): Admission {
  if (taken.ok) return RUN;
  const overAll = taken.tool === ALL_TOOLS_KEY;
  const held = overAll ? rules.allTools : rules;
  return taken.limit === 'rate'
    ? rateRefusal(tool, held?.rate, taken.retryAfterMs, overAll)
    : quotaRefusal(tool, held?.quota, taken.retryAfterMs, overAll);
}

/** The words and the details' `scope` of a limit over all of the tenant's tools. */
const OVER_ALL = ' over all of its tools';

function rateRefusal(tool: string, rate: ToolRateLimit | undefined, ms: number, overAll: boolean): Admission {
  const seconds = retryAfterSeconds(ms);
  const limit = rate ? { rate: rate.rate, per: rate.per, burst: bucketOf(rate).burst } : {};
  const what = `${rate ? ` of ${rate.rate} calls per ${rate.per}` : ''}${overAll ? OVER_ALL : ' on it'}`;
  const message = `${tool} was not run: the tenant's rate limit${what} is used up; try again in ${seconds} s`;
  return refusal(
    'tenant_rate',
    failure('TOOL_RATE_LIMITED', message, {
      tool,
      limit: 'rate',
      ...(overAll ? { scope: 'all_tools' } : {}),
      ...limit,
      retry_after_seconds: seconds,
    }),
  );
}

function quotaRefusal(tool: string, quota: ToolQuota | undefined, ms: number, overAll: boolean): Admission {
  const seconds = retryAfterSeconds(ms);
  const what = `${quota ? ` of ${quota.max} calls per ${quota.period}` : ''}${overAll ? OVER_ALL : ' on it'}`;
  const message = `${tool} was not run: the tenant's quota${what} is used up; the next period starts in ${seconds} s`;
  return refusal(
    'tenant_quota',
    failure('TOOL_QUOTA_EXCEEDED', message, {
      tool,
      limit: 'quota',
      ...(overAll ? { scope: 'all_tools' } : {}),
      ...(quota ? { max: quota.max, period: quota.period } : {}),
      retry_after_seconds: seconds,
    }),
  );
}

function refusal(budget: TenantLimitName, error: SerializedError): Admission {
  return { kind: 'refuse', budget, error };
}

/**
 * The failure of a call whose refusal by a tenant's limit was journaled and whose outcome was lost (a crash
 * between the two): the same code, decided again by nothing (the store is not asked: the decision is the
 * journal's). `retry_after_seconds` is 0: a new call is decided afresh.
 */
export function tenantRefusedAgain(tool: string, name: TenantLimitName): SerializedError {
  const rate = name === 'tenant_rate';
  const message = `${tool} was not run: the tenant's ${rate ? 'rate limit' : 'quota'} on it refused it`;
  return failure(rate ? 'TOOL_RATE_LIMITED' : 'TOOL_QUOTA_EXCEEDED', message, {
    tool,
    limit: rate ? 'rate' : 'quota',
    retry_after_seconds: 0,
  });
}
