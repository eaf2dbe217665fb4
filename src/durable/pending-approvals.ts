import { decodeValue } from '../codec/index.ts';
import type { JournalEntry } from '../spec/index.ts';

export interface PendingApproval {
  readonly id: string;
  readonly tool: string;
  readonly arguments: unknown;
  /** When the call asked (the request's journal time). */
  readonly requestedAt: string;
}

/** Approval requests in a task's journal that have no decision yet, in the order they were made. */
export function pendingApprovals(journal: readonly JournalEntry[]): PendingApproval[] {
  const decided = new Set(
    journal.filter((e) => e.type === 'approval_decision').map((e) => String(e.data.approval_id)),
  );
  return journal
    .filter((e) => e.type === 'approval_request' && !decided.has(String(e.data.approval_id)))
    .map((e) => ({
      id: String(e.data.approval_id),
      tool: String(e.data.tool),
      arguments: decodeValue(String(e.data.args)),
      requestedAt: e.createdAt,
    }));
}
