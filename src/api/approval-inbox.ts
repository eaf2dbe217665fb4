import type { CorruptTaskItem } from './corrupt-item.ts';

/** One call waiting for a human's decision, as the approvals inbox lists it. */
export interface ApprovalInboxItem {
  readonly task_id: string;
  readonly approval_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly requested_at: string;
  readonly tenant: string;
  readonly session_id: string | null;
  /** When the request expires (ISO time); null: never. */
  readonly expires_at: string | null;
  /** Whether the decider the inbox was asked for may decide it (present only then). */
  readonly may_decide?: boolean;
}

/**
 * A page of the inbox: the pending approvals of up to `limit` waiting tasks, oldest first, and the tasks that
 * could not be read for theirs (skipped, flagged); `next_cursor` continues (null: no more tasks wait).
 */
export interface ApprovalInbox {
  readonly approvals: readonly ApprovalInboxItem[];
  readonly corrupt: readonly CorruptTaskItem[];
  readonly next_cursor: string | null;
}
