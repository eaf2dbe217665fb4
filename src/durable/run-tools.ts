import { failure } from '../errors/index.ts';
import { budgetCeilingsFor, EGRESS_BINDINGS, narrowAccess, networkPolicyFor } from '../spec/index.ts';
import type {
  BudgetCeilings,
  Egress,
  GuestToolBinding,
  JournalEntry,
  SerializedError,
  TaskBodies,
  TaskRecord,
  TenantBudgetCeilings,
  TenantNetworkPolicies,
} from '../spec/index.ts';
import { BudgetLedger } from './budget-ledger.ts';
import { egressTools } from './egress-tools.ts';
import { INPUT_WAIT_BINDING } from './input-wait.ts';
import type { RunnerTools } from './runner-tools.ts';

export interface RunToolsOptions {
  readonly tools: RunnerTools;
  /** The runner's bindings: its tools' and input.wait. */
  readonly bindings: readonly GuestToolBinding[];
  readonly egress?: Egress | undefined;
  readonly egressPolicies?: TenantNetworkPolicies | undefined;
  /** Each tenant's access for its tasks that say nothing of network_access (`false` says no). */
  readonly egressDefaults?: TenantNetworkPolicies | undefined;
  readonly egressMaxRequests?: number | undefined;
  /** The operator's ceilings on tool budgets, applied to the task's at every run (ADR 0044). */
  readonly budgetCeilings?: BudgetCeilings | undefined;
  /** Each tenant's own ceilings over those (`*`: the others). */
  readonly tenantBudgetCeilings?: TenantBudgetCeilings | undefined;
  /** The bound on one call's encoded result (ADR 0027), which a response body must fit in. */
  readonly maxResultBytes?: number | undefined;
  /** The task's body store (ADR 0046): fetch's large bodies go there, out of the journal. */
  readonly bodies?: TaskBodies | undefined;
}

export interface RunTools {
  readonly tools: RunnerTools;
  readonly bindings: readonly GuestToolBinding[];
  readonly budgets: BudgetLedger | null;
}

/**
 * What one run of a task may call: the tools it names (all by default) and input.wait; fetch's egress calls
 * (ADR 0043) under its network access as its tenant's policy allows it now; its budgets (ADR 0044), what it used
 * folded from its journal. An error when the task needs what this runner lacks.
 */
export function runTools(
  task: TaskRecord,
  journal: readonly JournalEntry[],
  o: RunToolsOptions,
): RunTools | { readonly error: SerializedError } {
  const { input } = task;
  // A task that says nothing gets its tenant's default access, as the operator's config is now.
  const given = input.constraints?.networkAccess;
  const asked = given === undefined ? networkPolicyFor(o.egressDefaults, task.tenant) : given;
  // The tenant's policy as it is now, not as it was at submit: a tightened one holds for stored tasks too.
  const access = asked ? narrowAccess(asked, networkPolicyFor(o.egressPolicies, task.tenant)) : asked;
  if (access && !o.egress) {
    return {
      error: failure('INVALID_CONFIG', 'this server makes no network requests for tasks (no egress)'),
    };
  }
  const tools =
    access && o.egress
      ? egressTools(o.tools, {
          egress: o.egress,
          access,
          journal,
          bodies: o.bodies,
          audit: { taskId: task.id, tenant: task.tenant },
          ...(o.maxResultBytes === undefined ? {} : { maxResultBytes: o.maxResultBytes }),
          ...(o.egressMaxRequests === undefined ? {} : { maxRequests: o.egressMaxRequests }),
        })
      : o.tools;
  const allowed = input.tools ? new Set(input.tools) : null;
  const bindings = [
    ...(allowed
      ? o.bindings.filter((b) => b === INPUT_WAIT_BINDING || allowed.has(`${b.namespace}.${b.name}`))
      : o.bindings),
    ...(tools === o.tools ? [] : EGRESS_BINDINGS),
  ];
  // The ceilings as they are now, as for the network policy: a lowered one holds for stored tasks too.
  const ceilings = budgetCeilingsFor(o.budgetCeilings, o.tenantBudgetCeilings, task.tenant);
  const budgets = BudgetLedger.of(input.constraints?.budgets, tools, journal, ceilings);
  return { tools, bindings, budgets };
}
