import type { JournalEntry, NetworkAccess, Egress } from '../spec/index.ts';
import {
  DEFAULT_MAX_REQUESTS,
  EGRESS_BINDINGS,
  EGRESS_EFFECTS,
  EGRESS_NAMESPACE,
  egressHost,
} from '../spec/index.ts';
import type { RunnerTools } from './runner-tools.ts';

export interface EgressToolsOptions {
  readonly egress: Egress;
  readonly access: NetworkAccess;
  /** The operator's ceiling on requests per task; the task's own `maxRequests` is capped by it. */
  readonly maxRequests?: number;
  /** The task's journal before this run: the requests it already made count against its budget. */
  readonly journal: readonly JournalEntry[];
}

/**
 * A task's tools with fetch's egress calls added (spec/egress-calls.ts), served by `egress` under the task's
 * `network_access`; the requests its journal holds count against its budget, once each.
 */
export function egressTools(base: RunnerTools, options: EgressToolsOptions): RunnerTools {
  const ceiling = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const budget = Math.min(options.access.maxRequests ?? ceiling, ceiling);
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
        budget,
        made,
      }),
  };
}
