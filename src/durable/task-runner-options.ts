import type { CallSizeLimits } from './call-size-limits.ts';
import type { PausedVmOutcome } from './paused-vms.ts';
import type {
  BudgetCeilings,
  Egress,
  JournalLimits,
  LogEntry,
  SandboxDriver,
  TaskAgent,
  TaskStore,
  TenantBudgetCeilings,
  TenantNetworkPolicies,
  TenantToolLimits,
} from '../spec/index.ts';
import type { RuntimeEvent } from '../api/index.ts';
import type { RunnerTools } from './runner-tools.ts';

/** What a TaskRunner is made with: its store, drivers and tools, and the bounds it runs tasks under. */
export interface TaskRunnerOptions {
  readonly store: TaskStore;
  /** One driver, or several: a task runs on the first that speaks its language. */
  readonly driver?: SandboxDriver;
  readonly drivers?: readonly SandboxDriver[];
  readonly tools: RunnerTools;
  /** Identifies this runner in leases. */
  readonly owner: string;
  readonly leaseMs?: number;
  /** Resume tasks whose journal was written with other tools or another engine (default: pause them). */
  readonly acceptChangedTools?: boolean;
  /** Runs in a row that may die without progress before the task fails with CRASH_LOOP. */
  readonly maxStalledAttempts?: number;
  readonly controlPollMs?: number;
  /** Tasks of one tenant running at once (over every runner on the store). */
  readonly maxPerTenant?: number;
  /** A tenant's soft share of the slots (see TaskStore.claimTask): past it, served only when no other waits. */
  readonly tenantShare?: number;
  /** Slots a tenant at its share may not borrow (see TaskStore.claimTask). */
  readonly tenantReserve?: number;
  /** Tasks running at once over every runner on the store (the runtime passes its concurrency). */
  readonly maxRunning?: number;
  /** First backoff of an infrastructure retry. */
  readonly retryBaseMs?: number;
  /**
   * Runs again after a tool's service could not be reached (TOOL_UNAVAILABLE, ADR 0047), before `max_retries` is
   * counted: default 5. Then the task's `max_retries`, then `needs_attention`.
   */
  readonly toolUnavailableRetries?: number;
  /** First backoff of those runs (doubling, half of it jittered; default 2000 ms: waits of ~1-2 s up to ~16-32 s). */
  readonly toolUnavailableRetryBaseMs?: number;
  readonly clock?: () => number;
  /** Receives the guest's console output (passed to `tools.host({ onLog })`). */
  readonly onLog?: (entry: LogEntry) => void;
  /** Status changes, log lines and journal entries of the tasks this runner runs. */
  readonly onEvent?: (event: RuntimeEvent) => void;
  /** Runs instruction tasks; without one they fail with MODEL_NOT_CONFIGURED. */
  readonly agent?: TaskAgent;
  /** Lines for the operator (a run that lost its lease). */
  readonly log?: (line: string) => void;
  /** Lines of a debug level (each run's end), e.g. the service's structured log; absent: none are made. */
  readonly debugLog?: (line: string) => void;
  /** Bounds on one call's encoded arguments and result (ADR 0027). */
  readonly sizes?: CallSizeLimits;
  /** Bounds on a task's whole journal (ADR 0029). */
  readonly journalLimits?: JournalLimits;
  /** The operator's expiry of approval requests (`approvalTtlSeconds`); a tool's may be shorter. */
  readonly approvalTtlSeconds?: number | null;
  /** Makes the requests of tasks with `network_access` (issue 21); without it such tasks fail INVALID_CONFIG. */
  readonly egress?: Egress;
  /** The operator's ceiling on one task's requests (default 100). */
  readonly egressMaxRequests?: number;
  /** Each tenant's network policy, applied to its tasks' access at every run (`*`: the others). */
  readonly egressPolicies?: TenantNetworkPolicies;
  /** Each tenant's network access for its tasks that say nothing of it (RuntimeOptions.egressDefaults). */
  readonly egressDefaults?: TenantNetworkPolicies;
  /** The operator's ceilings on tool budgets, held to at every run (ADR 0044; the ceiling where a task sets none). */
  readonly budgetCeilings?: BudgetCeilings;
  /** Each tenant's own budget ceilings over those (`*`: the others), held to at every run like them. */
  readonly tenantBudgetCeilings?: TenantBudgetCeilings;
  /** Each tenant's rate limits and quotas on tool calls (ADR 0045), checked; the store must keep usage. */
  readonly tenantLimits?: TenantToolLimits;
  /**
   * Bytes of paused VMs kept in memory to resume from instead of replaying (ADR 0056; default 64 MiB, 0 keeps
   * none). Least recently paused first out; losing one only means a replay.
   */
  readonly pausedVmBudgetBytes?: number;
  /** Told what each resume found of a kept paused VM (resumed from it, stale, or none), e.g. for metrics. */
  readonly onPausedVm?: (outcome: PausedVmOutcome) => void;
}
