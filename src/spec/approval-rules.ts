import type { KeyRole } from './key-role.ts';

/** The key roles a tool's approval policy may name. */
export const APPROVER_ROLES: readonly KeyRole[] = ['admin', 'member', 'approver'];

/**
 * How a tool's approvals are decided (`defineTool({ approval })`): who may decide, and how long a request waits.
 * The operator's config (`approverRoles`, `approvalSeparation`, `approvalTtlSeconds`) may only tighten it.
 */
export interface ToolApproval {
  /** Key roles that may decide; absent: any role the operator allows. */
  readonly roles?: readonly KeyRole[];
  /** The key that submitted the task may not decide its approvals. */
  readonly separation?: boolean;
  /** The request expires (the call fails with APPROVAL_EXPIRED) this long after it was asked. */
  readonly expiresAfterSeconds?: number;
}

/** Who may decide an approval and when it expires: a tool's declaration and the operator's config together. */
export interface ApprovalRules {
  /** Roles that may decide; null: every key that sees the task. */
  readonly roles: readonly KeyRole[] | null;
  readonly separation: boolean;
  /** Null: the request never expires. */
  readonly ttlSeconds: number | null;
}

export const OPEN_APPROVAL_RULES: ApprovalRules = Object.freeze({
  roles: null,
  separation: false,
  ttlSeconds: null,
});

/** Both sets of rules hold: roles intersect, separation if either asks, the shorter TTL. Neither loosens. */
export function tightenRules(a: ApprovalRules, b: ApprovalRules): ApprovalRules {
  const roles =
    a.roles === null ? b.roles : b.roles === null ? a.roles : a.roles.filter((r) => b.roles?.includes(r));
  const ttl =
    a.ttlSeconds === null
      ? b.ttlSeconds
      : b.ttlSeconds === null
        ? a.ttlSeconds
        : Math.min(a.ttlSeconds, b.ttlSeconds);
  return { roles, separation: a.separation || b.separation, ttlSeconds: ttl };
}

/** A tool's declaration as rules (what it leaves out is open). */
export function rulesOfTool(approval: ToolApproval | undefined): ApprovalRules {
  return {
    roles: approval?.roles ?? null,
    separation: approval?.separation === true,
    ttlSeconds: approval?.expiresAfterSeconds ?? null,
  };
}

/** The one decision on who may decide: why `decider` may not, or null when it may. */
export function approverRefusal(
  rules: Pick<ApprovalRules, 'roles' | 'separation'>,
  decider: { readonly actor: string; readonly role?: KeyRole },
  submitter: string | null,
): 'role' | 'same_as_submitter' | null {
  // A decider without a role is in-process code the operator wrote (or the local CLI): only keys carry roles.
  if (rules.roles !== null && decider.role !== undefined && !rules.roles.includes(decider.role))
    return 'role';
  // The actor is `key:<id>`: separation is per key (two keys of one person are two actors; see ADR 0026).
  if (rules.separation && submitter !== null && submitter === decider.actor) return 'same_as_submitter';
  return null;
}
