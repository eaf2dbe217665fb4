/** One call waiting for a human's decision, as the approvals inbox lists it. */
export interface ApprovalInboxItem {
  readonly task_id: string;
  readonly approval_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly requested_at: string;
  readonly tenant: string;
  readonly session_id: string | null;
}
