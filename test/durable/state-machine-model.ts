import fc from 'fast-check';
import { isTerminal } from '../../src/spec/index.ts';
import type { TaskStatus } from '../../src/spec/index.ts';
import type { TaskView } from '../../src/api/index.ts';

// The actions of the state-machine property, what each must do to a task that cannot move by itself (paused or
// ended), and the model of what the test asked and the runtime accepted (for the expected ends).

export const MAX_TASKS = 3;
/** What a refused action may say (VERSION_CONFLICT: it raced with the task's own progress). */
export const REFUSAL_CODES = ['ILLEGAL_TRANSITION', 'INVALID_ARGUMENT', 'VERSION_CONFLICT'];
/** The result a `skip` decision gives the lost call. */
export const SKIPPED = 'skipped';

type OnTask = { task: number; via: number };
export type Action =
  | { kind: 'submit'; via: number }
  | ({ kind: 'pause' } & OnTask)
  | ({ kind: 'resume' } & OnTask)
  | ({ kind: 'cancel' } & OnTask)
  | ({
      kind: 'decide';
      pick: number;
      all: boolean;
      bogus: boolean;
      decision: 'approve' | 'reject';
      /** The deciding runtime dies after this many more writes (e.g. while the approved call runs). */
      crashAfter: number | null;
    } & OnTask)
  | ({ kind: 'input'; name: 'x' | 'y'; value: number } & OnTask)
  | ({ kind: 'attention'; action: 'retry' | 'skip' | 'fail' } & OnTask)
  | { kind: 'wait'; ms: number }
  | { kind: 'settle'; task: number }
  | { kind: 'crash'; which: number; afterWrites: number }
  | { kind: 'restart'; which: number };

const rarely = (weight: number) =>
  fc.oneof({ arbitrary: fc.constant(false), weight }, { arbitrary: fc.constant(true), weight: 1 });
const onTask = { task: fc.nat(MAX_TASKS - 1), via: fc.nat(1) };
const record = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ arbitrary, weight });

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  record(2, fc.record({ kind: fc.constant('submit' as const), via: fc.nat(1) })),
  record(2, fc.record({ kind: fc.constant('pause' as const), ...onTask })),
  record(3, fc.record({ kind: fc.constant('resume' as const), ...onTask })),
  record(1, fc.record({ kind: fc.constant('cancel' as const), ...onTask })),
  record(
    6,
    fc.record({
      kind: fc.constant('decide' as const),
      ...onTask,
      pick: fc.nat(1),
      all: rarely(1).map((partial) => !partial),
      // A made-up approval id now and then (refused with INVALID_ARGUMENT when the task waits for approval).
      bogus: rarely(6),
      decision: fc.constantFrom('approve' as const, 'reject' as const),
      crashAfter: fc.option(fc.integer({ min: 1, max: 6 }), { freq: 3 }),
    }),
  ),
  record(
    4,
    fc.record({
      kind: fc.constant('input' as const),
      ...onTask,
      name: fc.constantFrom('x' as const, 'y' as const),
      value: fc.nat(9),
    }),
  ),
  record(
    2,
    fc.record({
      kind: fc.constant('attention' as const),
      ...onTask,
      action: fc.constantFrom('retry' as const, 'skip' as const, 'fail' as const),
    }),
  ),
  record(3, fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 100 }) })),
  record(4, fc.record({ kind: fc.constant('settle' as const), task: fc.nat(MAX_TASKS - 1) })),
  record(3, fc.record({ kind: fc.constant('crash' as const), which: fc.nat(1), afterWrites: fc.nat(8) })),
  record(1, fc.record({ kind: fc.constant('restart' as const), which: fc.nat(1) })),
);

/** What the test asked of one task and the runtime accepted. */
export interface TaskModel {
  readonly id: string;
  /** Approval decisions by approval id (= call id). */
  readonly decisions: Map<string, 'approve' | 'reject'>;
  /** Actors of accepted `skip` decisions (the journal says which call each bound to). */
  readonly skips: string[];
  input: number | null;
  /** Accepted cancels: the write position when asked and the status the call returned. */
  readonly cancels: { at: number; returned: TaskStatus }[];
  /** A cancel was accepted, or asked through a runtime that died before answering. */
  cancelAsked: boolean;
  failedByHuman: boolean;
}

export function newTaskModel(id: string): TaskModel {
  return {
    id,
    decisions: new Map(),
    skips: [],
    input: null,
    cancels: [],
    cancelAsked: false,
    failedByHuman: false,
  };
}

export interface Refusal {
  readonly taskId: string;
  readonly actor: string;
  readonly code: string;
}

export interface RunLog {
  readonly tasks: TaskModel[];
  readonly refusals: Refusal[];
  /** One line per action and its outcome, shown when the property fails. */
  readonly trace: string[];
}

/** The outcome an action must have on a task that is paused or ended (nothing else moves it meanwhile). */
export function predict(action: Action, view: TaskView, ids: readonly string[]): string {
  const paused = view.status === 'paused';
  const reason = view.pause_reason;
  switch (action.kind) {
    case 'pause':
      return 'ILLEGAL_TRANSITION';
    case 'resume':
      return paused && (reason === 'user_request' || reason === 'shutdown') ? 'accept' : 'ILLEGAL_TRANSITION';
    case 'cancel':
      return isTerminal(view.status) ? 'ILLEGAL_TRANSITION' : 'accept';
    case 'decide': {
      if (!paused || reason !== 'approval_required') return 'ILLEGAL_TRANSITION';
      const pending = new Set(view.pending_approvals.map((a) => a.id));
      return ids.every((id) => pending.has(id)) ? 'accept' : 'INVALID_ARGUMENT';
    }
    case 'input':
      if (!paused) return 'ILLEGAL_TRANSITION';
      return view.pending_inputs.some((p) => p.name === action.name) ? 'accept' : 'INVALID_ARGUMENT';
    case 'attention':
      return paused && reason === 'needs_attention' ? 'accept' : 'ILLEGAL_TRANSITION';
    default:
      return 'accept';
  }
}

/** The status an accepted action on a paused task leads to at once. */
export function expectedAfter(action: Action, view: TaskView): TaskStatus {
  if (action.kind === 'cancel') return 'cancelled';
  if (action.kind === 'attention' && action.action === 'fail') return 'failed';
  if (action.kind === 'input' && view.pause_reason !== 'awaiting_input') return 'paused';
  return 'pending';
}

/** The approval ids a `decide` sends: pending ones (one or all), or one that is not pending. */
export function approvalIds(action: Action & { kind: 'decide' }, view: TaskView): string[] {
  const pending = view.pending_approvals.map((a) => a.id);
  if (action.bogus) return ['call-999'];
  if (action.all && pending.length > 0) return pending;
  return [pending[action.pick % Math.max(1, pending.length)] ?? 'call-2'];
}
