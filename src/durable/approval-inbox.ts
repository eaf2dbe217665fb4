import { toJsonView } from '../codec/index.ts';
import { corruptItem } from '../api/index.ts';
import type { ApprovalInbox, ApprovalInboxItem, CorruptTaskItem } from '../api/index.ts';
import { isCorruptTask, readSummaryForView } from '../spec/index.ts';
import type { ApprovalRules, TaskStore } from '../spec/index.ts';
import { mayDecide } from './approver-check.ts';
import type { Decider } from './approver-check.ts';
import { viewApprovals } from './summary-view.ts';

/** Waiting tasks per inbox page, by default. */
const DEFAULT_PAGE = 100;

/**
 * A page of the pending approvals of the tenant's tasks (an admin: every tenant's, or the one named), oldest task
 * first: one store page of the tasks waiting for approval, read without their programs (ADR 0036), and of each
 * its journal's summary and request rows (ADR 0035), arguments over 16 KiB by their digest. A page then costs
 * what it shows. A task whose row or journal is corrupt is skipped and listed in `corrupt`: it hides no other
 * task's approvals.
 */
export async function approvalInbox(
  store: TaskStore,
  filter: { readonly tenant?: string | undefined; readonly limit?: number; readonly cursor?: string },
  who?: { readonly decider: Decider; readonly rules: ApprovalRules },
): Promise<ApprovalInbox> {
  const approvals: ApprovalInboxItem[] = [];
  const page = await store.listTasks({
    status: 'paused',
    pauseReason: 'approval_required',
    summarised: true,
    limit: filter.limit ?? DEFAULT_PAGE,
    ...(filter.tenant === undefined ? {} : { tenant: filter.tenant }),
    ...(filter.cursor === undefined ? {} : { cursor: filter.cursor }),
  });
  // A paused row that cannot be read may well wait for approval: it is flagged, not guessed at.
  const corrupt: CorruptTaskItem[] = (page.corrupt ?? []).map(corruptItem);
  for (const task of page.tasks) {
    // The summary and the request rows it names (ADR 0035), not the task's whole journal.
    const journal = await readSummaryForView(store, task);
    if (isCorruptTask(journal)) {
      corrupt.push(corruptItem(journal));
      continue;
    }
    const pending = viewApprovals(journal);
    // The same check `decide` makes; the submitter is read once per task, only when a rule needs it.
    const refusals = who ? await mayDecide(store, who.rules, who.decider, task.id, pending) : [];
    for (const [i, a] of pending.entries()) {
      approvals.push({
        task_id: task.id,
        approval_id: a.id,
        tool: a.tool,
        arguments: toJsonView(a.arguments),
        requested_at: a.requestedAt,
        tenant: task.tenant,
        session_id: task.sessionId,
        expires_at: a.expiresAt === null ? null : new Date(a.expiresAt).toISOString(),
        ...(who ? { may_decide: refusals[i] === null } : {}),
      });
    }
  }
  return { approvals, corrupt, next_cursor: page.nextCursor };
}
