// The host side of a task's network access (issue 21): the sandbox has no network; the host makes each request
// under the task's allow list, to public addresses only, and hands back the bytes (journaled by the caller).
export { createEgress } from './create-egress.ts';
export { DEFAULT_EGRESS_LIMITS } from './egress-settings.ts';
export type { EgressOptions } from './egress-settings.ts';
export type { EgressAuditSink } from './audit-record.ts';
export type { SecretBinding } from './secrets.ts';
export type { LimitName, RefusalReason } from './egress-errors.ts';
export { isLocalhostName, refusedAddressReason } from './address-rules.ts';
export { pinnedLookup } from './pinned-lookup.ts';
