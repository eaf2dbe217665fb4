/** `approver`: a member of its tenant that may also decide approvals where a policy asks for that role. */
export type KeyRole = 'admin' | 'member' | 'approver';
