// The figures of a chaos run and what each must be, from the ledger (the outside world), the database and the
// tasks' final views. Each count is of violations; the run is clean when every one is 0.
import type { ChaosPlan } from './chaos-plan.ts';
import type { DbFacts } from './chaos-facts.ts';
import type { FaultKind } from './chaos-plan.ts';
import { holderAt } from './chaos-facts.ts';
import type { LedgerRecord } from './ledger.ts';
import type { OperatorFigures } from './chaos-operator.ts';

export interface AppliedFault {
  readonly kind: FaultKind;
  /** The server it struck (the new one for `second` and `taken-port`). */
  readonly pid: number;
  readonly at: number;
  /** A stop's SIGCONT. */
  resumedAt?: number;
}

export interface FinalView {
  readonly status: string;
  readonly output: unknown;
}

export interface ChaosFigures {
  readonly seed: number;
  readonly tasks: number;
  readonly calls: number;
  readonly kills: number;
  readonly stops: number;
  /** Stops of a server holding tasks that another server then took over (the stale-writer case). */
  readonly stopsTakenOver: number;
  /** SIGSTOPs that caught the server inside a write transaction (every server on the file stalled meanwhile). */
  readonly stopsHoldingWriteLock: number;
  readonly secondServers: number;
  readonly takenPortStarts: number;
  /** Claims by a server started on a taken port (it never served: issue 16 item 4). */
  readonly claimsByServersThatNeverServed: number;
  /** Tasks paused by a server's shutdown that no live server resumed (the harness resumed them: item 4). */
  readonly shutdownPausesLeftWaiting: number;
  readonly approvalPauses: number;
  readonly approvalsOneByOne: number;
  readonly approvalsTogether: number;
  /** needs_attention pauses decided (rounds), and the calls decided in them. */
  readonly attentionPauses: number;
  readonly attentionCalls: number;
  readonly otherPauses: number;
  readonly ledgerWrites: number;
  /** Writes the ledger refused for a stale fencing token (what a fencing-aware system does for you). */
  readonly staleWritesRefused: number;
  readonly lost: number;
  readonly wrongResults: number;
  readonly completedCallsRerun: number;
  readonly unsafeTwice: number;
  readonly unsafeTwiceByHolders: number;
  readonly keyedTwoKeys: number;
  /** Side effects by a process without the lease that it could have prevented (see the check). */
  readonly writesWithoutLease: number;
  /** Stale writes fencing lets through by design (a resumed writer, before the ledger saw a newer token). */
  readonly staleWritesLetThrough: number;
  /** Writes whose fencing token was older than the task's latest claim; null while tools see no token. */
  readonly staleTokenWrites: number | null;
  readonly falseAttention: number;
  readonly extraAttentionRounds: number;
  /** `codecall audit verify` on the database once every server is gone (0: intact). */
  readonly auditVerify?: { readonly exitCode: number; readonly keyed: boolean; readonly output: string };
  /** With webhooks: deliveries, those whose signature did not verify, tasks never told their end, batch.completed. */
  readonly webhooks?: {
    readonly deliveries: number;
    readonly unsigned: number;
    readonly tasksNeverTold: number;
    readonly batchCompleted: number;
  };
  /** The ops behind the non-zero counts, to look into a failing seed. */
  readonly details: Readonly<Record<string, readonly string[]>>;
}

export function figuresOf(input: {
  plan: ChaosPlan;
  taskIds: readonly string[];
  finals: readonly (FinalView | null)[];
  ledger: readonly LedgerRecord[];
  facts: DbFacts;
  faults: readonly AppliedFault[];
  operator: OperatorFigures;
  leaseMs: number;
}): Omit<ChaosFigures, 'stopsTakenOver' | 'stopsHoldingWriteLock'> {
  const { plan, taskIds, finals, ledger, facts, faults, operator, leaseMs } = input;
  const taskOf = (op: string): string => taskIds[Number(/^T(\d+)\./.exec(op)?.[1])] ?? '';
  const writes = ledger.filter((r) => r.kind === 'write');
  const writesOf = (op: string): LedgerRecord[] => writes.filter((r) => r.op === op);
  const calls = plan.tasks.flatMap((t) => t.steps.flat());

  const lost = finals.filter((f) => f?.status !== 'succeeded').length;
  const wrongResults = plan.tasks.filter((t, i) => {
    const f = finals[i];
    return f?.status === 'succeeded' && JSON.stringify(f.output) !== JSON.stringify(t.expected);
  }).length;
  // A call whose outcome was journaled never starts again.
  const reruns = ledger.filter((r) => {
    const outcomeAt = facts.calls.get(r.op)?.outcomeAt;
    return r.kind === 'begin' && outcomeAt !== undefined && r.at > outcomeAt;
  });

  const keyedTwoKeys = calls.filter(
    (c) => c.effect === 'keyed' && new Set(writesOf(c.op).map((r) => r.key)).size > 1,
  ).length;
  // A side effect by a process that did not hold the task's lease when it landed.
  const unleased = writes.filter((r) => holderAt(facts.holdings.get(taskOf(r.op)), r.at) !== r.pid);
  // Fencing lets one kind through by design: a writer stopped in the middle of a call, whose write lands just after
  // it resumes (before it can see that the lease is gone) and before the new holder showed the ledger a newer
  // token; its call is in doubt for the recovery, which looks before it charges again. Any other write without
  // the lease is one a worker could have prevented: without a token, from a process never stopped, or past a
  // lease after it resumed (its running tools should have seen their signal abort by then).
  const fenceable = (r: LedgerRecord): boolean =>
    r.token !== null &&
    faults.some(
      (f) =>
        f.kind === 'stop' &&
        f.pid === r.pid &&
        f.resumedAt !== undefined &&
        f.at < r.at &&
        r.at <= f.resumedAt + leaseMs,
    );
  const unprevented = unleased.filter((r) => !fenceable(r));
  // Charged twice; and of those, the ones where every charge came from the lease's holder (the others follow
  // from a stale writer, issue 16 item 3).
  const twice = calls.filter((c) => c.effect === 'unsafe' && writesOf(c.op).length > 1);
  const unsafeTwiceByHolders = twice.filter((c) => !unleased.some((r) => r.op === c.op)).length;
  const tokens = writes.filter((r) => r.token !== null);
  const staleTokenWrites =
    tokens.length === 0
      ? null
      : tokens.filter((r) => {
          const claims = (facts.holdings.get(taskOf(r.op)) ?? []).filter((h) => h.to === 'running');
          return (r.token ?? 0) < claims.filter((h) => h.at <= r.at).length;
        }).length;
  // needs_attention is right only for a call in flight (intent journaled, no outcome, not waiting for a person)
  // in a process that a SIGKILL or SIGSTOP struck while it held the task.
  const falseAttentions = operator.attention.filter((a) => {
    const call = facts.calls.get(a.op);
    return !faults.some((f) => {
      if (
        f.kind === 'second' ||
        f.kind === 'taken-port' ||
        !call ||
        call.intentAt === undefined ||
        call.intentAt > f.at
      )
        return false;
      if (call.outcomeAt !== undefined && call.outcomeAt <= f.at) return false;
      const waiting =
        call.approvalRequestedAt !== undefined &&
        call.approvalRequestedAt <= f.at &&
        (call.approvalDecidedAt === undefined || call.approvalDecidedAt > f.at);
      return !waiting && holderAt(facts.holdings.get(a.taskId), f.at) === f.pid;
    });
  });
  const neverServed = new Set(faults.filter((f) => f.kind === 'taken-port').map((f) => f.pid));
  const claimsByServersThatNeverServed = [...facts.holdings.values()]
    .flat()
    .filter((h) => h.to === 'running' && h.ownerPid !== null && neverServed.has(h.ownerPid)).length;
  const roundsOf = new Map<string, Set<number>>();
  for (const a of operator.attention) {
    const key = `${a.taskId}@${a.epoch}`;
    roundsOf.set(key, (roundsOf.get(key) ?? new Set()).add(a.round));
  }
  const extraAttentionRounds = [...roundsOf.values()].reduce((n, r) => n + r.size - 1, 0);
  const attentionPauses = new Set(operator.attention.map((a) => a.round)).size;
  return {
    seed: plan.seed,
    tasks: plan.tasks.length,
    calls: calls.length,
    kills: faults.filter((f) => f.kind === 'kill').length,
    stops: faults.filter((f) => f.kind === 'stop').length,
    secondServers: faults.filter((f) => f.kind === 'second').length,
    takenPortStarts: neverServed.size,
    claimsByServersThatNeverServed,
    shutdownPausesLeftWaiting: operator.shutdownPausesLeftWaiting,
    approvalPauses: operator.approvalPauses,
    approvalsOneByOne: operator.approvalsOneByOne,
    approvalsTogether: operator.approvalsTogether,
    attentionPauses,
    attentionCalls: operator.attention.length,
    otherPauses: operator.otherPauses,
    ledgerWrites: writes.length,
    staleWritesRefused: ledger.filter((r) => r.kind === 'refused').length,
    lost,
    wrongResults,
    completedCallsRerun: reruns.length,
    unsafeTwice: twice.length,
    unsafeTwiceByHolders,
    keyedTwoKeys,
    writesWithoutLease: unprevented.length,
    staleWritesLetThrough: unleased.length - unprevented.length,
    staleTokenWrites,
    falseAttention: falseAttentions.length,
    extraAttentionRounds,
    details: {
      completedCallsRerun: reruns.map((r) => `${r.op} by ${r.pid}`),
      writesWithoutLease: unprevented.map((r) => `${r.op} by ${r.pid}`),
      unsafeTwice: twice.map((c) => c.op),
      falseAttention: falseAttentions.map((a) => `${a.op} (${a.action})`),
    },
  };
}
