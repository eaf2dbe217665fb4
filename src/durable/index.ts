export { JournalingHost } from './journaling-host.ts';
export type { JournalingHostOptions } from './journaling-host.ts';
export { runJournaled, DEFAULT_SETTLE_MS } from './run-journaled.ts';
export type { ExecutionJournal, RunJournaledOptions } from './run-journaled.ts';
export { TaskRunner, DEFAULT_LEASE_MS } from './task-runner.ts';
export { DEFAULT_CONTROL_POLL_MS } from './control-watch.ts';
export type { TaskRunnerOptions } from './task-runner.ts';
export type { RunnerTools } from './runner-tools.ts';
export { BudgetLedger } from './budget-ledger.ts';
export type { Admission, BudgetTools } from './budget-ledger.ts';
export { nextAttempt, DEFAULT_MAX_STALLED_ATTEMPTS } from './crash-loop.ts';
export { toolManifestHash } from './tool-manifest.ts';
export type { ManifestTools } from './tool-manifest.ts';
export { pendingApprovals } from './pending-approvals.ts';
export { viewApprovals } from './summary-view.ts';
export type { PendingApproval } from './pending-approvals.ts';
export { createRuntime, DEFAULT_CONCURRENCY, DEFAULT_POLL_MS } from './create-runtime.ts';
export { describeLeaseOwner, leaseOwnerGone, newLeaseOwner } from './lease-owner.ts';
export type { RuntimeOptions } from './runtime-types.ts';
export type { LimitCeilings } from './limit-ceilings.ts';
export { taskView } from './task-view.ts';
export { INPUT_WAIT_BINDING } from './input-wait.ts';
export { pendingInputs, attentionCall, nextWake } from './journal-state.ts';
export type { PendingInput, AttentionCall } from './journal-state.ts';
export {
  decideApprovals,
  provideInput,
  resolveAttention,
  resumePaused,
  timeOutInputs,
} from './paused-actions.ts';
export type { PausedAction } from './paused-actions.ts';
export { settleRun, addResources } from './settle-run.ts';
export { DEFAULT_MAX_STEPS, DEFAULT_MAX_STEP_RETRIES } from './submit-input.ts';
