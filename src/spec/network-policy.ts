import { CodecallError } from '../errors/index.ts';
import { parseAllowEntry } from './allow-entry.ts';
import type { AllowEntry } from './allow-entry.ts';
import type { NetworkAccess } from './egress.ts';
import { DEFAULT_METHODS } from './network-access.ts';
import { smaller } from './wire-form.ts';

/**
 * What the tasks of a tenant may ask of the network (issue 21), by tenant; `*` for the tenants not named. Each is
 * a ceiling on a task's `network_access`: the hosts it may name (a task's entry must be covered by one of the
 * policy's), http, the methods and the caps. Checked at submit (a clear refusal) and applied again at each run,
 * so a policy tightened later holds for tasks already stored.
 */
export type TenantNetworkPolicies = Readonly<Record<string, NetworkAccess>>;

/** The policy of `tenant`, else the `*` one; undefined: the tenant is bounded by the operator's ceilings only. */
export function networkPolicyFor(
  policies: TenantNetworkPolicies | undefined,
  tenant: string,
): NetworkAccess | undefined {
  if (policies === undefined) return undefined;
  return Object.hasOwn(policies, tenant) ? policies[tenant] : policies['*'];
}

function compiled(text: string): AllowEntry | null {
  const entry = parseAllowEntry(text);
  return typeof entry === 'string' ? null : entry;
}

/** Whether a task's allow entry reaches only what a policy entry does (same port; a wildcard covers below it). */
function covers(policy: AllowEntry, task: AllowEntry): boolean {
  if (policy.port !== task.port) return false;
  if (!policy.wildcard) return !task.wildcard && task.host === policy.host;
  return task.host.endsWith(`.${policy.host}`) || (task.wildcard && task.host === policy.host);
}

/** The task's entries a policy's entries cover. */
function coveredEntries(task: readonly string[], policy: readonly string[]): string[] {
  const ceilings = policy.map(compiled).filter((e): e is AllowEntry => e !== null);
  return task.filter((text) => {
    const entry = compiled(text);
    return entry !== null && ceilings.some((c) => covers(c, entry));
  });
}

/** Refuses (INVALID_ARGUMENT naming the field) a task's access that asks for more than its tenant's policy. */
export function checkTenantNetwork(
  access: NetworkAccess,
  policy: NetworkAccess,
  tenant: string,
  field = 'tool_constraints.network_access',
): void {
  const refuse = (at: string, what: string): never => {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field}.${at}: ${what} (tenant ${tenant}'s network policy)`,
      {
        details: { field: `${field}.${at}`, tenant },
      },
    );
  };
  const covered = new Set(coveredEntries(access.allow, policy.allow));
  const outside = access.allow.find((e) => !covered.has(e));
  if (outside !== undefined) refuse('allow', `"${outside}" is not within ${policy.allow.join(', ')}`);
  if (access.allowHttp === true && policy.allowHttp !== true)
    refuse('allow_http', 'plain http is not allowed');
  // Methods a task names must be allowed; naming none, it gets the policy's (narrowAccess).
  const allowed = policy.methods ?? DEFAULT_METHODS;
  const method = (access.methods ?? []).find((m) => !allowed.includes(m));
  if (method !== undefined) refuse('methods', `${method} is not allowed`);
  const caps = [
    ['maxRequests', 'max_requests'],
    ['maxBytes', 'max_bytes'],
    ['timeoutSeconds', 'timeout_seconds'],
  ] as const;
  for (const [key, wire] of caps) {
    const asked = access[key];
    const cap = policy[key];
    if (asked !== undefined && cap !== undefined && asked > cap) refuse(wire, `must be at most ${cap}`);
  }
}

/**
 * What a task may do under its tenant's policy at run time: its entries the policy covers, http and methods only
 * where both allow, each cap the lower one. No entry left: every request is refused (`not_allowed`).
 */
export function narrowAccess(access: NetworkAccess, policy: NetworkAccess | undefined): NetworkAccess {
  if (policy === undefined) return access;
  const allow = coveredEntries(access.allow, policy.allow);
  const policyMethods = policy.methods ?? DEFAULT_METHODS;
  const maxRequests = smaller(access.maxRequests, policy.maxRequests);
  const maxBytes = smaller(access.maxBytes, policy.maxBytes);
  const timeoutSeconds = smaller(access.timeoutSeconds, policy.timeoutSeconds);
  return {
    allow,
    methods: (access.methods ?? DEFAULT_METHODS).filter((m) => policyMethods.includes(m)),
    ...(maxRequests === undefined ? {} : { maxRequests }),
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    allowHttp: access.allowHttp === true && policy.allowHttp === true,
  };
}
