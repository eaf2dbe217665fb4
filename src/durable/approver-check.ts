import { CodecallError } from '../errors/index.ts';
import { approverRefusal, tightenRules } from '../spec/index.ts';
import type { ApprovalRules, KeyRole, TaskStore } from '../spec/index.ts';
import type { PendingApproval } from './pending-approvals.ts';

/** Who decides: the actor journaled with the decision, and the role of its key (absent: in-process code). */
export interface Decider {
  readonly actor: string;
  readonly role?: KeyRole;
}

/** The actor that submitted the task: the `created` link of its audit log (null when it has none). */
export async function taskSubmitter(store: TaskStore, taskId: string): Promise<string | null> {
  const [created] = await store.readAudit(taskId, { limit: 1 });
  const actor = created?.type === 'created' ? created.data.actor : undefined;
  return typeof actor === 'string' ? actor : null;
}

/** The rules one approval is decided under: those fixed when it was asked, tightened by the operator's now. */
export function rulesFor(operator: ApprovalRules, approval: PendingApproval): ApprovalRules {
  return tightenRules(operator, { ...approval.rules, ttlSeconds: null });
}

/**
 * Whether `decider` may decide each of these approvals of one task (the inbox's `may_decide` and the decision's
 * check): one answer per approval, the submitter read once, only when some rule needs it.
 */
export async function mayDecide(
  store: TaskStore,
  operator: ApprovalRules,
  decider: Decider,
  taskId: string,
  approvals: readonly PendingApproval[],
): Promise<('role' | 'same_as_submitter' | null)[]> {
  const rules = approvals.map((a) => rulesFor(operator, a));
  const submitter = rules.some((r) => r.separation) ? await taskSubmitter(store, taskId) : null;
  return rules.map((r) => approverRefusal(r, decider, submitter));
}

/** Throws APPROVER_NOT_ALLOWED (403) when the decider may not decide one of these approvals. */
export async function assertMayDecide(
  store: TaskStore,
  operator: ApprovalRules,
  decider: Decider,
  taskId: string,
  approvals: readonly PendingApproval[],
): Promise<void> {
  const refusals = await mayDecide(store, operator, decider, taskId, approvals);
  const at = refusals.findIndex((r) => r !== null);
  const reason = refusals[at];
  const approval = approvals[at];
  if (reason === undefined || reason === null || approval === undefined) return;
  const roles = rulesFor(operator, approval).roles ?? [];
  const message =
    reason === 'role'
      ? `a ${decider.role ?? '?'} key may not decide approval ${approval.id} of ${approval.tool} (roles: ${roles.join(', ')})`
      : `the key that submitted task ${taskId} may not decide its approval ${approval.id} (separation of duties)`;
  throw new CodecallError('APPROVER_NOT_ALLOWED', message, {
    details: { reason, role: decider.role ?? null, task_id: taskId, approval_id: approval.id },
  });
}
