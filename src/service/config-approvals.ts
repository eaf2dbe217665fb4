import { z } from 'zod';

/** Who may decide approvals over the HTTP API (and so the console and the remote CLI). */
export const approvalsConfigShape = {
  /**
   * Key roles that may decide approvals, e.g. `["approver", "admin"]` (env `CODECALL_APPROVER_ROLES=approver,admin`). Default null: every key that sees the task
   * (today's behaviour).
   */
  approverRoles: z
    .preprocess(
      // The environment gives a list as `approver,admin`.
      (v) => (typeof v === 'string' ? v.split(',').map((r) => r.trim()) : v),
      z
        .array(z.enum(['admin', 'member', 'approver']))
        .min(1)
        .max(3)
        .nullable(),
    )
    .default(null),
  /** Separation of duties: the key that submitted a task may not decide its approvals. Default false. */
  approvalSeparation: z.boolean().default(false),
  /**
   * Seconds an approval request waits before it expires (the call fails with APPROVAL_EXPIRED, journaled by
   * `system`); a tool's `approval.expiresAfterSeconds` may only be shorter. Default null: never (ADR 0031).
   */
  approvalTtlSeconds: z.number().int().min(1).max(31_536_000).nullable().default(null),
};
