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
  const decided = new Set<string>();
  for (const e of journal) if (e.type === 'approval_decision') decided.add(e.data.approval_id);
  const pending: PendingApproval[] = [];
  for (const e of journal) {
    if (e.type !== 'approval_request' || decided.has(e.data.approval_id)) continue;
    const { approval_id: id, tool, args } = e.data;
    pending.push({ id, tool, arguments: decodeValue(args), requestedAt: e.createdAt });
  }
  return pending;
}
