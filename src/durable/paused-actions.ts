import { assertJsonValue, encodeValue } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { JournalEntry, JournalEntryInput, PauseReason, TaskPatch, TaskRecord } from '../spec/index.ts';
import { attentionCalls, earliestDeadline, earlier, pendingInputs } from './journal-state.ts';
import { earliestExpiry, expiredApprovals, pendingApprovals } from './pending-approvals.ts';
import type { PendingApproval } from './pending-approvals.ts';
import type { ApprovalDecision, AttentionDecision } from '../api/index.ts';

/** What a human's action on a paused task writes: journal entries and the patch, applied in one transaction. */
export interface PausedAction {
  readonly patch: TaskPatch;
  readonly append: JournalEntryInput[];
}

const toPending: TaskPatch = { status: 'pending', wakeAt: null, error: null };

function mustBePaused(task: TaskRecord, reasons: readonly PauseReason[], what: string): void {
  if (task.status !== 'paused' || task.pauseReason === null || !reasons.includes(task.pauseReason)) {
    const now = task.status === 'paused' ? `paused (${task.pauseReason ?? '?'})` : task.status;
    throw new CodecallError('ILLEGAL_TRANSITION', `task ${task.id} is ${now}; ${what}`, {
      details: { status: task.status, pause_reason: task.pauseReason },
    });
  }
}

/** A human's decision on approvals: what it writes, and the approvals it decides (whose rules must allow it). */
export interface ApprovalAction extends PausedAction {
  readonly decided: readonly PendingApproval[];
}

function approvalExpired(taskId: string, approvalId: string, at: number | null): CodecallError {
  const when = at === null ? '' : ` at ${new Date(at).toISOString()}`;
  return new CodecallError('APPROVAL_EXPIRED', `approval ${approvalId} of task ${taskId} expired${when}`, {
    details: { approval_id: approvalId, expires_at: at === null ? null : new Date(at).toISOString() },
  });
}

/**
 * Decisions on pending approvals, each bound to the call (and so the exact arguments) it was asked for. One that
 * expired (journaled, or past its time and not swept yet) is APPROVAL_EXPIRED, whatever the task does since.
 */
export function decideApprovals(
  task: TaskRecord,
  journal: readonly JournalEntry[],
  decisions: readonly ApprovalDecision[],
  actor: string,
  now: number,
): ApprovalAction {
  const expired = expiredApprovals(journal);
  const late = decisions.find((d) => expired.has(d.approvalId));
  if (late) throw approvalExpired(task.id, late.approvalId, expiryOf(journal, late.approvalId));
  if (decisions.length === 0 && task.pauseReason !== 'approval_required') {
    // "Decide whatever is pending" after the last request expired: say so rather than that nothing waits.
    const last = lastDecision(journal);
    if (last !== null && expired.has(last)) throw approvalExpired(task.id, last, expiryOf(journal, last));
  }
  mustBePaused(task, ['approval_required'], 'only a task waiting for approval takes decisions');
  if (decisions.length === 0) throw new CodecallError('INVALID_ARGUMENT', 'no decisions given');
  const pending = new Map(pendingApprovals(journal).map((a) => [a.id, a]));
  const seen = new Set<string>();
  const decided: PendingApproval[] = [];
  for (const d of decisions) {
    if (seen.has(d.approvalId)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `approval ${d.approvalId} is decided twice in one request`,
        {
          details: { approval_id: d.approvalId },
        },
      );
    }
    seen.add(d.approvalId);
    const approval = pending.get(d.approvalId);
    if (!approval) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `approval ${d.approvalId} is not pending on task ${task.id}`,
        {
          details: { pending: [...pending.keys()] },
        },
      );
    }
    // Past its time, the sweep has not come yet: it is expired all the same (the sweep journals it).
    if (approval.expiresAt !== null && approval.expiresAt <= now) {
      throw approvalExpired(task.id, approval.id, approval.expiresAt);
    }
    if (d.decision !== 'approve' && d.decision !== 'reject') {
      throw new CodecallError('INVALID_ARGUMENT', 'decision must be "approve" or "reject"');
    }
    decided.push(approval);
  }
  const append = decisions.map((d) => ({
    type: 'approval_decision' as const,
    data: { approval_id: d.approvalId, decision: d.decision, actor, reason: d.reason ?? '' },
  }));
  return { patch: toPending, append, decided };
}

function expiryOf(journal: readonly JournalEntry[], approvalId: string): number | null {
  for (const e of journal) {
    if (e.type === 'approval_request' && e.data.approval_id === approvalId) return e.data.expires_at ?? null;
  }
  return null;
}

function lastDecision(journal: readonly JournalEntry[]): string | null {
  for (let i = journal.length - 1; i >= 0; i--) {
    const e = journal[i];
    if (e?.type === 'approval_decision') return e.data.approval_id;
  }
  return null;
}

/** Answers the oldest pending `input.wait` of this name with a JSON value. */
export function provideInput(
  task: TaskRecord,
  journal: readonly JournalEntry[],
  name: string,
  value: unknown,
  actor: string,
): PausedAction {
  if (task.status !== 'paused') {
    throw new CodecallError(
      'ILLEGAL_TRANSITION',
      `task ${task.id} is ${task.status}, not waiting for input`,
      {
        details: { status: task.status, pause_reason: task.pauseReason },
      },
    );
  }
  const pending = pendingInputs(journal);
  const wait = pending.find((p) => p.name === name);
  if (!wait) {
    throw new CodecallError('INVALID_ARGUMENT', `task ${task.id} is not waiting for input "${name}"`, {
      details: { waiting_for: pending.map((p) => p.name) },
    });
  }
  const encoded = encodeValue(assertJsonValue(value, `input "${name}"`), { root: 'value' });
  const append = [
    { type: 'input_provided' as const, data: { call_id: wait.callId, name, value: encoded, actor } },
  ];
  // Like approvals, an answer runs the task on at once (a wait still open pauses it again); a task paused for
  // another reason keeps that pause and takes the answer when it resumes, waking only for the waits still open.
  if (task.pauseReason === 'awaiting_input') return { patch: toPending, append };
  const others = earliestDeadline(pending.filter((p) => p.callId !== wait.callId));
  return { patch: { wakeAt: earlier(others, earliestExpiry(pendingApprovals(journal))) }, append };
}

/**
 * Waits whose time passed: an input wait fails in the guest with INPUT_TIMEOUT, an approval request expires (the
 * call fails with APPROVAL_EXPIRED), journaled as a decision of `system`. Null when nothing is due.
 */
export function timeOutInputs(
  task: TaskRecord,
  journal: readonly JournalEntry[],
  now: number,
): PausedAction | null {
  if (task.status !== 'paused') return null;
  const pending = pendingInputs(journal);
  const due = pending.filter((p) => p.deadline !== null && p.deadline <= now);
  const approvals = pendingApprovals(journal);
  const expiring = approvals.filter((a) => a.expiresAt !== null && a.expiresAt <= now);
  const later = earlier(
    earliestDeadline(pending.filter((p) => !due.includes(p))),
    earliestExpiry(approvals.filter((a) => !expiring.includes(a))),
  );
  if (due.length === 0 && expiring.length === 0) {
    // Nothing due after all (answered meanwhile): set the wake-up right, so the task leaves the due list.
    return later === task.wakeAt ? null : { patch: { wakeAt: later }, append: [] };
  }
  const append: JournalEntryInput[] = due.map((p) => ({
    type: 'input_timeout' as const,
    data: { call_id: p.callId, name: p.name },
  }));
  for (const a of expiring) {
    const at = new Date(a.expiresAt ?? now).toISOString();
    append.push({
      type: 'approval_decision',
      data: {
        approval_id: a.id,
        decision: 'reject',
        actor: 'system',
        reason: `expired at ${at}`,
        expired: true,
      },
    });
  }
  const runs =
    (task.pauseReason === 'awaiting_input' && due.length > 0) ||
    (task.pauseReason === 'approval_required' && expiring.length > 0);
  return { patch: runs ? toPending : { wakeAt: later }, append };
}

/** A human's decision on a task paused with needs_attention (a lost unsafe call, or changed tools). */
export function resolveAttention(
  task: TaskRecord,
  journal: readonly JournalEntry[],
  decision: AttentionDecision,
  actor: string,
): PausedAction {
  mustBePaused(task, ['needs_attention'], 'there is nothing to resolve');
  const reason = decision.reason ?? '';
  if (decision.action === 'fail') {
    const message = `failed by ${actor} after needing attention${reason ? `: ${reason}` : ''}`;
    return {
      patch: { status: 'failed', error: { code: task.error?.code ?? 'NEEDS_ATTENTION', message } },
      append: [{ type: 'control', data: { action: 'fail', actor, reason } }],
    };
  }
  const pending = attentionCalls(journal);
  if (pending.length === 0 && unavailable(task)) {
    if (decision.action === 'skip') {
      throw new CodecallError('INVALID_ARGUMENT', `task ${task.id} has no call to skip; retry or fail`);
    }
    return resumeUnavailable(actor);
  }
  if (pending.length === 0) {
    // Changed tools or engine: `retry` accepts them, `skip` has no call to skip.
    if (decision.action === 'skip') {
      throw new CodecallError('INVALID_ARGUMENT', `task ${task.id} has no call to skip; retry or fail`);
    }
    return {
      patch: toPending,
      append: [{ type: 'control', data: { action: 'accept_changed_tools', actor, reason } }],
    };
  }
  if (decision.action !== 'retry' && decision.action !== 'skip') {
    throw new CodecallError('INVALID_ARGUMENT', 'action must be "retry", "skip" or "fail"');
  }
  const payload =
    decision.action === 'skip'
      ? encodeValue(assertJsonValue(decision.result ?? null, 'the result of a skipped call'), {
          root: 'result',
        })
      : undefined;
  // Without a call id, a retry covers every call in doubt; a skip (its result is one call's) the first, the one
  // `attention` names, as before calls were raised together.
  const chosen =
    decision.callId !== undefined
      ? pending.filter((c) => c.callId === decision.callId)
      : decision.action === 'skip'
        ? pending.slice(0, 1)
        : pending;
  if (chosen.length === 0) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `call ${decision.callId} is not in doubt on task ${task.id}`,
      { details: { in_doubt: pending.map((c) => c.callId) } },
    );
  }
  const append = chosen.map((call) => ({
    type: 'attention_decision' as const,
    data: {
      call_id: call.callId,
      action: decision.action as 'retry' | 'skip',
      ...(payload === undefined ? {} : { payload }),
      actor,
      reason,
    },
  }));
  // The task waits until every call in doubt is decided: it runs on once, with all the decisions.
  return { patch: chosen.length === pending.length ? toPending : {}, append };
}

/** A task that waits because a tool's service was down (TOOL_UNAVAILABLE, ADR 0047): no call is in doubt. */
function unavailable(task: TaskRecord): boolean {
  return task.pauseReason === 'needs_attention' && task.error?.code === 'TOOL_UNAVAILABLE';
}

/** Runs a task that waited for a tool's service again (a retry or a resume: the same, nothing to decide). */
function resumeUnavailable(actor: string): PausedAction {
  return { patch: toPending, append: [{ type: 'control', data: { action: 'resume', actor } }] };
}

/**
 * `resume` of a task paused by request or shutdown, or waiting for a tool's service; other pauses wait on a
 * decision, not a resume.
 */
export function resumePaused(task: TaskRecord, actor: string, force = false): PausedAction {
  if (task.status === 'paused' && unavailable(task)) return resumeUnavailable(actor);
  if (force && task.status === 'paused' && task.pauseReason === 'needs_attention') {
    return {
      patch: toPending,
      append: [{ type: 'control', data: { action: 'accept_changed_tools', actor, reason: 'forced resume' } }],
    };
  }
  const hint: Record<string, string> = {
    approval_required: 'approve or reject its pending approvals',
    awaiting_input: 'provide the input it waits for',
    needs_attention: 'resolve it (retry, skip or fail), or resume with force to accept changed tools',
  };
  const why = task.pauseReason === null ? undefined : hint[task.pauseReason];
  mustBePaused(task, ['user_request', 'shutdown'], why ?? 'only a paused task resumes');
  return { patch: toPending, append: [{ type: 'control', data: { action: 'resume', actor } }] };
}
