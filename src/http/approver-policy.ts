import { CodecallError } from '../errors/index.ts';
import type { KeyRole, Principal, TaskStore } from '../spec/index.ts';

/** Who may decide a task's approvals over HTTP (service config `approverRoles`, `approvalSeparation`). */
export interface ApproverPolicy {
  /** Roles that may decide; null: every key that sees the task. */
  readonly roles: readonly KeyRole[] | null;
  /** The key that submitted the task may not decide its approvals. */
  readonly separateFromSubmitter: boolean;
}

export const OPEN_APPROVER_POLICY: ApproverPolicy = Object.freeze({
  roles: null,
  separateFromSubmitter: false,
});

/** Why `principal` may not decide approvals of a task submitted by `submitter`, or null when it may. */
export function approverRefusal(
  policy: ApproverPolicy,
  principal: Principal,
  submitter: string | null,
): 'role' | 'same_as_submitter' | null {
  if (policy.roles !== null && !policy.roles.includes(principal.role)) return 'role';
  // The actor is `key:<id>`: separation is per key (two keys of one person are two actors; see ADR 0026).
  if (policy.separateFromSubmitter && submitter !== null && submitter === principal.actor)
    return 'same_as_submitter';
  return null;
}

/** The actor that submitted the task: the `created` link of its audit log (null when it has none). */
export async function taskSubmitter(store: TaskStore, taskId: string): Promise<string | null> {
  const [created] = await store.readAudit(taskId, { limit: 1 });
  const actor = created?.type === 'created' ? created.data.actor : undefined;
  return typeof actor === 'string' ? actor : null;
}

/** Throws APPROVER_NOT_ALLOWED (403) when the caller may not decide the task's approvals. */
export async function assertMayDecide(
  store: TaskStore,
  policy: ApproverPolicy,
  principal: Principal,
  taskId: string,
): Promise<void> {
  if (policy.roles === null && !policy.separateFromSubmitter) return;
  const reason = approverRefusal(
    policy,
    principal,
    policy.separateFromSubmitter ? await taskSubmitter(store, taskId) : null,
  );
  if (reason === null) return;
  const message =
    reason === 'role'
      ? `a ${principal.role} key may not decide approvals (approverRoles: ${policy.roles?.join(', ') ?? ''})`
      : 'the key that submitted this task may not decide its approvals (approvalSeparation)';
  throw new CodecallError('APPROVER_NOT_ALLOWED', message, {
    details: { reason, role: principal.role, task_id: taskId },
  });
}
