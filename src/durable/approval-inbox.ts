import { toJsonView } from '../codec/index.ts';
import { corruptItem } from '../api/index.ts';
import type { ApprovalInbox, ApprovalInboxItem, CorruptTaskItem } from '../api/index.ts';
import { isCorruptTask, readSummaryForView } from '../spec/index.ts';
import type { ApprovalRules, TaskRecord, TaskStore } from '../spec/index.ts';
import { mayDecide } from './approver-check.ts';
import type { Decider } from './approver-check.ts';
import { viewApprovals } from './summary-view.ts';

/** Paused tasks read per store page while collecting the inbox. */
const PAGE = 1000;

/** Every task of the tenant (an admin: of every tenant, or the one named) that waits for approval. */
async function waitingTasks(
  store: TaskStore,
  tenant: string | undefined,
  corrupt: CorruptTaskItem[],
): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  for (let cursor: string | undefined; ;) {
    const page = await store.listTasks({
      status: 'paused',
      limit: PAGE,
      ...(tenant === undefined ? {} : { tenant }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    out.push(...page.tasks.filter((t) => t.pauseReason === 'approval_required'));
    // A paused row that cannot be read may well wait for approval: it is flagged, not guessed at.
    corrupt.push(...(page.corrupt ?? []).map(corruptItem));
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}

/**
 * Every pending approval of the tenant's tasks (an admin's: every tenant's, or the one named), oldest task first.
 * A task whose row or journal is corrupt is skipped and listed in `corrupt`: it hides no other task's approvals.
 */
export async function approvalInbox(
  store: TaskStore,
  tenant: string | undefined,
  who?: { readonly decider: Decider; readonly rules: ApprovalRules },
): Promise<ApprovalInbox> {
  const approvals: ApprovalInboxItem[] = [];
  const corrupt: CorruptTaskItem[] = [];
  for (const task of await waitingTasks(store, tenant, corrupt)) {
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
  return { approvals, corrupt };
}
