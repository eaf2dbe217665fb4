import { failure } from '../errors/index.ts';
import {
  bucketOf,
  isTaskToolNamespace,
  limitsOfCall,
  quotaTermsOf,
  retryAfterSeconds,
} from '../spec/index.ts';
import type {
  HostCall,
  SerializedError,
  TenantLimitName,
  TenantToolLimits,
  ToolLimitsOfCall,
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

  /** Takes the call's token and counts it against its quota, or refuses it; rejects when the store fails. */
  async admit(
    call: HostCall & { kind: 'tool' },
    rules: ToolLimitsOfCall,
    signal: AbortSignal,
  ): Promise<Admission> {
    const tool = `${call.namespace}.${call.name}`;
    const now = this.options.clock();
    // A quota of 0 refuses every call: nothing to count.
    if (rules.quota?.max === 0)
      return quotaRefusal(tool, rules, quotaTermsOf(rules.quota, now).periodEnd - now);
    const taken = await this.options.store.takeUsage(
      {
        tenant: this.options.tenant,
        tool,
        now,
        ...(rules.rate ? { rate: bucketOf(rules.rate) } : {}),
        ...(rules.quota ? { quota: quotaTermsOf(rules.quota, now) } : {}),
      },
      { signal },
    );
    return refusalOf(taken, tool, rules);
  }
}

function refusalOf(taken: UsageTaken, tool: string, rules: ToolLimitsOfCall): Admission {
  if (taken.ok) return RUN;
  return taken.limit === 'rate'
    ? rateRefusal(tool, rules, taken.retryAfterMs)
    : quotaRefusal(tool, rules, taken.retryAfterMs);
}

function rateRefusal(tool: string, rules: ToolLimitsOfCall, ms: number): Admission {
  const rate = rules.rate;
  const seconds = retryAfterSeconds(ms);
  const limit = rate ? { rate: rate.rate, per: rate.per, burst: bucketOf(rate).burst } : {};
  const what = rate ? ` of ${rate.rate} calls per ${rate.per}` : '';
  const message = `${tool} was not run: the tenant's rate limit${what} on it is used up; try again in ${seconds} s`;
  return refusal(
    'tenant_rate',
    failure('TOOL_RATE_LIMITED', message, {
      tool,
      limit: 'rate',
      ...limit,
      retry_after_seconds: seconds,
    }),
  );
}

function quotaRefusal(tool: string, rules: ToolLimitsOfCall, ms: number): Admission {
  const quota = rules.quota;
  const seconds = retryAfterSeconds(ms);
  const what = quota ? ` of ${quota.max} calls per ${quota.period}` : '';
  const message = `${tool} was not run: the tenant's quota${what} on it is used up; the next period starts in ${seconds} s`;
  return refusal(
    'tenant_quota',
    failure('TOOL_QUOTA_EXCEEDED', message, {
      tool,
      limit: 'quota',
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
