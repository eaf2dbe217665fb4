export { JournalingHost } from './journaling-host.ts';
export type { JournalingHostOptions } from './journaling-host.ts';
export { runJournaled, DEFAULT_SETTLE_MS } from './run-journaled.ts';
export type { RunJournaledOptions } from './run-journaled.ts';
export { TaskRunner, DEFAULT_LEASE_MS } from './task-runner.ts';
export type { TaskRunnerOptions, RunnerTools } from './task-runner.ts';
export { transition, eventBetween, canTransitionTo, isTerminal } from './transition.ts';
export { nextAttempt, DEFAULT_MAX_STALLED_ATTEMPTS } from './crash-loop.ts';
