import type { CallSizeLimits } from './call-size-limits.ts';
import type {
  ApprovalRules,
  Egress,
  JournalLimits,
  SandboxDriver,
  TaskAgent,
  TaskStore,
  TenantNetworkPolicies,
  ToolQuota,
  ToolRateLimit,
} from '../spec/index.ts';
import type { RunnerTools } from './runner-tools.ts';
import type { RuntimeObserver } from '../api/index.ts';
import type { LimitCeilings } from './limit-ceilings.ts';

export interface RuntimeOptions {
  readonly store: TaskStore;
  /** Empty for a runtime that only steers tasks (a CLI command that runs nothing). */
  readonly drivers: readonly SandboxDriver[];
  readonly tools: RunnerTools;
  /** Identifies this runtime in leases (default: `runtime-<pid>-<random>`). */
  readonly owner?: string;
  /** Tasks run at once by `start()`'s loop, and at most running over every runtime on the store (default 4). */
  readonly concurrency?: number;
  readonly leaseMs?: number;
  readonly pollMs?: number;
  readonly acceptChangedTools?: boolean;
  readonly maxStalledAttempts?: number;
  /** Tasks of one tenant running at once, over every runtime on the store (default: no cap). A hard cap. */
  readonly tenantConcurrency?: number;
  /**
   * A tenant's share of the slots, soft (work-conserving, ADR 0023): a tenant running this many tasks gets a free
   * slot only when no tenant running fewer has a claimable task. Default: none (the claim is fair across tenants
   * all the same: the tenant with the fewest running goes first).
   */
  readonly tenantShare?: number;
  /**
   * Slots a tenant at its share may not borrow, kept for tenants below theirs (default none: fully
   * work-conserving). Without preemption a borrowed slot is held until its task ends; the reserve bounds that.
   */
  readonly tenantReserve?: number;
  /** The most a task may ask for (timeouts, memory, priority...): above it, submit is INVALID_ARGUMENT. */
  readonly ceilings?: LimitCeilings;
  /** First backoff of an infrastructure retry (doubles per retry, with full jitter; default 1000 ms). */
  readonly retryBaseMs?: number;
  /**
   * Runs again after a tool's service could not be reached (TOOL_UNAVAILABLE, ADR 0047), before `max_retries` is
   * counted: default 5. Then the task's `max_retries`, then `needs_attention`.
   */
  readonly toolUnavailableRetries?: number;
  /** First backoff of those runs (doubling, half of it jittered; default 2000 ms: waits of ~1-2 s up to ~16-32 s). */
  readonly toolUnavailableRetryBaseMs?: number;
  readonly clock?: () => number;
  /** Hooks for what the events do not show (metrics); see RuntimeObserver. */
  readonly observer?: RuntimeObserver;
  /** Runs instruction tasks (a model writes the code); without one they fail with MODEL_NOT_CONFIGURED. */
  readonly agent?: TaskAgent;
  /** Lines for the operator (a run that lost its lease), e.g. the service's log. */
  readonly log?: (line: string) => void;
  /** Lines of a debug level (each run's end), e.g. the service's structured log; absent: none are made. */
  readonly debugLog?: (line: string) => void;
  /** Bounds on one tool call's encoded arguments and result, each 1 MiB by default (ADR 0027). */
  readonly sizes?: CallSizeLimits;
  /** Bounds on a task's whole journal, none by default (the service sets 64 MiB and 100,000 entries; ADR 0029). */
  readonly journalLimits?: JournalLimits;
  /** Bytes of paused VMs kept in memory to resume from instead of replaying (ADR 0056; default 64 MiB, 0: none). */
  readonly pausedVmBudgetBytes?: number;
  /** Makes the requests of tasks with `network_access` (issue 21); without it such tasks fail INVALID_CONFIG. */
  readonly egress?: Egress;
  /** The operator's ceiling on one task's requests (default 100). */
  readonly egressMaxRequests?: number;
  /** Each tenant's network policy, applied again at every run (the submit check is `ceilings.networkPolicies`). */
  readonly egressPolicies?: TenantNetworkPolicies;
  /**
   * Each tenant's default network access (`*`: the others), for its tasks that say nothing of `network_access` (a
   * task's `false` opts out); held to the tenant's policy. Default: none, such a task has no network.
   */
  readonly egressDefaults?: TenantNetworkPolicies;
  /**
   * The operator's rules on approvals (ADR 0031): who may decide (tightening each tool's own) and the default
   * expiry of a request. Default: anyone who sees the task, never expiring.
   */
  readonly approvals?: ApprovalRules;
  /**
   * Each tenant's rate limits on tool calls (ADR 0045), e.g. `{ tenant: 'acme', tool: 'web.search', rate: 10,
   * per: 'second', burst: 20 }` (`*`: the tenants or tools no other rule names; the tool `all`: one bucket over all
   * of the tenant's tools together, ADR 0044 amended). Kept in the store: they hold across restarts and over every
   * runtime on it. A call past one fails with TOOL_RATE_LIMITED.
   */
  readonly toolRateLimits?: readonly ToolRateLimit[];
  /** Each tenant's quotas on tool calls per UTC hour, day or month (ADR 0045); past one: TOOL_QUOTA_EXCEEDED. */
  readonly toolQuotas?: readonly ToolQuota[];
}
