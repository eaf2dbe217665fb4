import { decodeValue } from '../codec/index.ts';
import { APPROVER_ROLES } from '../spec/index.ts';
import type { ApprovalRules, JournalEntry, JournalEntryOf, KeyRole } from '../spec/index.ts';

export interface PendingApproval {
  readonly id: string;
  readonly tool: string;
  readonly arguments: unknown;
  /** When the call asked (the request's journal time). */
  readonly requestedAt: string;
  /** Who may decide it, as fixed when it was asked (the operator's config may tighten it further). */
  readonly rules: Pick<ApprovalRules, 'roles' | 'separation'>;
  /** Epoch ms when it expires; null: never. */
  readonly expiresAt: number | null;
}

/** Approval requests in a task's journal that have no decision yet, in the order they were made. */
export function pendingApprovals(journal: readonly JournalEntry[]): PendingApproval[] {
  const decided = new Set<string>();
  for (const e of journal) if (e.type === 'approval_decision') decided.add(e.data.approval_id);
  const pending: PendingApproval[] = [];
  for (const e of journal) {
    if (e.type !== 'approval_request' || decided.has(e.data.approval_id)) continue;
    pending.push(approvalOf(e, decodeValue));
  }
  return pending;
}

/** The approval a request entry asks for; `args` turns its arguments' tagged JSON into what is shown. */
export function approvalOf(
  e: JournalEntryOf<'approval_request'>,
  args: (text: string) => unknown,
): PendingApproval {
  const { approval_id: id, tool, roles, separation, expires_at: expiresAt } = e.data;
  return {
    id,
    tool,
    arguments: args(e.data.args),
    requestedAt: e.createdAt,
    rules: {
      roles: roles === undefined ? null : APPROVER_ROLES.filter((r: KeyRole) => roles.includes(r)),
      separation: separation === true,
    },
    expiresAt: expiresAt ?? null,
  };
}

/** Approvals the runtime expired (journaled with `expired`), by approval id. */
export function expiredApprovals(journal: readonly JournalEntry[]): Set<string> {
  const expired = new Set<string>();
  for (const e of journal)
    if (e.type === 'approval_decision' && e.data.expired === true) expired.add(e.data.approval_id);
  return expired;
}

/** The earliest expiry among these approvals, or null. */
export function earliestExpiry(approvals: readonly PendingApproval[]): number | null {
  let at: number | null = null;
  for (const a of approvals) if (a.expiresAt !== null && (at === null || a.expiresAt < at)) at = a.expiresAt;
  return at;
}
