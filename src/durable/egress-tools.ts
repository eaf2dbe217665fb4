import type { EgressAuditContext, JournalEntry, NetworkAccess, Egress, TaskBodies } from '../spec/index.ts';
import { EGRESS_BINDINGS, EGRESS_EFFECTS, EGRESS_NAMESPACE, egressHost } from '../spec/index.ts';
import type { RunnerTools } from './runner-tools.ts';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from './call-size-limits.ts';

export interface EgressToolsOptions {
  readonly egress: Egress;
  readonly access: NetworkAccess;
  /** The operator's ceiling on requests per task; the task's own `maxRequests` is capped by it. */
  readonly maxRequests?: number;
  /** The task's journal before this run: the requests it already made count against its budget. */
  readonly journal: readonly JournalEntry[];
  /** The bound on one call's encoded result (ADR 0027): a response body must fit it, base64, with its headers. */
  readonly maxResultBytes?: number;
  /** The task's body store: large bodies out of line (ADR 0046); absent, bodies must fit a call's result. */
  readonly bodies?: TaskBodies | undefined;
  /** The task, named in each request's audit records. */
  readonly audit?: EgressAuditContext;
}

/** Room left in a call's result for the response's status, headers and URL besides its body. */
const RESPONSE_HEADROOM = 64 * 1024;

/**
 * A task's tools with fetch's egress calls added (spec/egress-calls.ts), served by `egress` under the task's
 * `network_access`; the requests its journal holds count against its budget, once each.
 */
export function egressTools(base: RunnerTools, options: EgressToolsOptions): RunnerTools {
  const made = new Set<string>();
  for (const e of options.journal) {
    if (e.type === 'tool_intent' && e.data.tool.startsWith(`${EGRESS_NAMESPACE}.`)) made.add(e.data.call_id);
  }
  return {
    bindings: [...base.bindings, ...EGRESS_BINDINGS],
    get: (namespace, name) => {
      if (namespace !== EGRESS_NAMESPACE) return base.get(namespace, name);
      const effect = EGRESS_EFFECTS[name];
      return effect === undefined ? undefined : { effect, requiresApproval: false };
    },
    host: (hostOptions) =>
      egressHost(hostOptions ? base.host(hostOptions) : base.host(), {
        egress: options.egress,
        access: options.access,
        maxRequests: options.maxRequests,
        made,
        ...(options.bodies ? { bodies: options.bodies } : {}),
        ...(options.audit ? { audit: options.audit } : {}),
        maxBodyBytes: Math.max(
          1,
          Math.floor(((options.maxResultBytes ?? DEFAULT_MAX_TOOL_RESULT_BYTES) - RESPONSE_HEADROOM) * 0.75),
        ),
      }),
  };
}
