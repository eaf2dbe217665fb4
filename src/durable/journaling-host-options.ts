import type { CodecallError } from '../errors/index.ts';
import type { CarryOver, ExecutionHost, JournalEntryInput, SerializedError } from '../spec/index.ts';
import type { CallSizeLimits } from './call-size-limits.ts';
import type { BudgetLedger } from './budget-ledger.ts';
import type { TenantLimitGate } from './tenant-limit-gate.ts';
import type { CallPolicy } from './call-decision.ts';

/** The policy (`needsApproval`, `effectOf`) is what the calls' decisions ask of the configuration. */
export interface JournalingHostOptions extends CallPolicy {
  /** Bounds on one call's encoded arguments and result (ADR 0027). */
  readonly sizes?: CallSizeLimits;
  /** Runs the calls the journal has no outcome for. */
  readonly live: ExecutionHost;
  /** This execution's earlier `tool_intent` / `tool_outcome` entries, in journal order. */
  readonly recorded: readonly JournalEntryInput[];
  /** How many recorded outcomes the guest has already (a resumed paused VM, ADR 0056); default none. */
  readonly delivered?: number;
  /** Calls earlier attempts completed, for a revised program to take over (ADR 0034). */
  readonly carry?: CarryOver;
  /**
   * Makes entries durable; an outcome is delivered only after its entry is committed, but for a taken-over call's
   * (it goes with the next commit: the run must `flush()` before it ends).
   */
  append(entries: readonly JournalEntryInput[]): Promise<void>;
  /** Epoch ms for live deliveries. */
  clock(): number;
  /** A call waits for approval: the runner pauses the execution (after collecting the others of this turn). */
  onApprovalRequired?(): void;
  /** The guest waits for external input (`input.wait`): the runner pauses the execution, as for approvals. */
  onInputRequired?(): void;
  /** A lost unsafe call came again and waits: the runner pauses with the others of this turn (`inDoubt`). */
  onAttentionRequired?(): void;
  /**
   * A tool's service could not be reached (its error says `details.unreachable`): its outcome is not journaled
   * (one never sent is marked `not_started`) and the runner ends the execution to try again later. Absent: the
   * failure is the call's outcome.
   */
  onUnreachable?(error: SerializedError): void;
  /** Prefix of the idempotency keys given to tool calls (`idempotencyScope`); the call id completes the key. */
  readonly keyPrefix?: string;
  /** The execution cannot go on (divergence, an unsafe call in doubt): the runner aborts it with this error. */
  onFatal(error: CodecallError): void;
  /** Running tools' `ctx.signal`: not aborted by a pause, so a started call journals its outcome (ADR 0020). */
  readonly toolSignal?: AbortSignal;
  /** The lease's fencing token, handed to tools (`ctx.fencingToken`). */
  readonly fencingToken?: number;
  /** Proves the lease before a tool that is not `read` starts; if it throws, the call never starts (ADR 0020). */
  proveLease?(): Promise<void>;
  /** The task's tool budgets and what it used (ADR 0044): each new call is admitted (or refused) by it. */
  readonly budgets?: BudgetLedger;
  /** The tenant's rate limits and quotas (ADR 0045): a new call under one is admitted by the store, in call order. */
  readonly tenantLimits?: TenantLimitGate;
  /** How the journal names this execution's call ids (an agent's step prefixes them); absent: as they are. */
  readonly journalId?: (callId: string) => string;
}
