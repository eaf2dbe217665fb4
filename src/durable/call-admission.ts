import { failure } from '../errors/index.ts';
import type { HostCall, HostOutcome, RefusalName, ToolLimitsOfCall } from '../spec/index.ts';
import { RUN } from './budget-ledger.ts';
import type { Admission, BudgetLedger } from './budget-ledger.ts';
import { tenantRefusedAgain } from './tenant-limit-gate.ts';
import type { TenantLimitGate } from './tenant-limit-gate.ts';

/**
 * Whether a new live call may run: the task's budgets (ADR 0044), then its tenant's rate limits and quotas in the
 * store (ADR 0045). The journaling host asks it once per new call, in call order, and journals the answer; a
 * replay never asks again.
 */
export class CallAdmission {
  constructor(
    private readonly options: { readonly budgets?: BudgetLedger; readonly tenantLimits?: TenantLimitGate },
  ) {}

  /** What the task's budgets say: it runs, unless it would pass one. */
  admit(call: HostCall): Admission {
    const budgets = this.options.budgets;
    return budgets && call.kind === 'tool' ? budgets.admit(call) : RUN;
  }

  /** The budgets' answer, then the tenant's limits' (a store round trip) when one applies; a store failure throws. */
  async admitUnderLimits(
    call: HostCall,
    limits: ToolLimitsOfCall | null,
    signal: AbortSignal,
  ): Promise<Admission> {
    const admission = this.admit(call);
    const gate = this.options.tenantLimits;
    if (admission.kind !== 'run' || limits === null || !gate || call.kind !== 'tool') return admission;
    const limited = await gate.admit(call, limits, signal);
    // Nothing was admitted meanwhile (the calls after this one wait), so the budgets' cost stands.
    return limited.kind === 'run' && admission.cost !== undefined
      ? { kind: 'run', cost: admission.cost }
      : limited;
  }

  /**
   * The failure of a call whose refusal was journaled and whose outcome was lost: the budget's own failure when it
   * still refuses (usage only grows, so it does unless the tools changed), else one naming the journaled budget.
   * A tenant's limit is not asked again (that would take a token): the journaled refusal stands.
   */
  refusedAgain(call: HostCall, budget: RefusalName): HostOutcome {
    const tool = call.kind === 'tool' ? `${call.namespace}.${call.name}` : 'a timer';
    if (budget === 'tenant_rate' || budget === 'tenant_quota')
      return { ok: false, error: tenantRefusedAgain(tool, budget) };
    const admission = this.admit(call);
    if (admission.kind === 'refuse') return { ok: false, error: admission.error };
    const message = `${tool} was not run: the task's ${budget} budget refused it`;
    return { ok: false, error: failure('TOOL_BUDGET_EXCEEDED', message, { budget, tool }) };
  }
}
