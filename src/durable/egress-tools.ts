import { CodecallError, failure } from '../errors/index.ts';
import type {
  Egress,
  EgressRequest,
  ExecutionHost,
  HostCall,
  HostOutcome,
  JournalEntry,
  NetworkAccess,
  ToolEffect,
} from '../spec/index.ts';
import type { RunnerTools } from './runner-tools.ts';

/**
 * What the guest's `fetch` calls (issue 21): `egress.read` for GET, HEAD and OPTIONS without a body (it reads, so
 * recovery may run it again), `egress.fetch` for the rest (an effect: a call in doubt needs a human). The calls
 * are journaled like any tool's, so a replay answers them with the same bytes and never fetches again.
 */
export const EGRESS_NAMESPACE = 'egress';
const EFFECTS: Readonly<Record<string, ToolEffect>> = { read: 'read', fetch: 'unsafe' };
export const EGRESS_BINDINGS = Object.keys(EFFECTS).map((name) => ({ namespace: EGRESS_NAMESPACE, name }));
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Requests a task may make when neither it nor the operator says. */
export const DEFAULT_MAX_REQUESTS = 100;

export interface EgressToolsOptions {
  readonly egress: Egress;
  readonly access: NetworkAccess;
  /** The operator's ceiling on requests per task; the task's own `maxRequests` is capped by it. */
  readonly maxRequests?: number;
  /** The task's journal before this run: the requests it already made count against its budget. */
  readonly journal: readonly JournalEntry[];
}

/** A task's tools with the egress calls added, served by `egress` under the task's `network_access`. */
export function egressTools(base: RunnerTools, options: EgressToolsOptions): RunnerTools {
  const ceiling = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const budget = Math.min(options.access.maxRequests ?? ceiling, ceiling);
  // Calls already journaled (their ids): a call in doubt that runs again is not counted twice.
  const made = new Set<string>();
  for (const e of options.journal) {
    if (e.type === 'tool_intent' && e.data.tool.startsWith(`${EGRESS_NAMESPACE}.`)) made.add(e.data.call_id);
  }
  const serve = async (call: HostCall & { kind: 'tool' }, signal: AbortSignal): Promise<HostOutcome> => {
    const request = requestOf(call);
    if ('error' in request) return { ok: false, error: request.error };
    if (!made.has(call.callId)) {
      if (made.size >= budget) {
        return {
          ok: false,
          error: failure(
            'EGRESS_LIMIT',
            `fetch: the task has made its ${budget} requests (network_access.max_requests)`,
            { limit: 'max_requests', max: budget },
          ),
        };
      }
      made.add(call.callId);
    }
    try {
      return { ok: true, value: await options.egress.fetch(request, options.access, { signal }) };
    } catch (error) {
      if (error instanceof CodecallError) return { ok: false, error: failure(error.code, error.message, error.details) };
      throw error;
    }
  };
  return {
    bindings: [...base.bindings, ...EGRESS_BINDINGS],
    get: (namespace, name) => {
      if (namespace !== EGRESS_NAMESPACE) return base.get(namespace, name);
      const effect = EFFECTS[name];
      return effect === undefined ? undefined : { effect, requiresApproval: false };
    },
    host: (hostOptions) => {
      const inner: ExecutionHost = hostOptions ? base.host(hostOptions) : base.host();
      return {
        ...inner,
        call: (call, signal) =>
          call.kind === 'tool' && call.namespace === EGRESS_NAMESPACE
            ? serve(call, signal)
            : inner.call(call, signal),
      };
    },
  };
}

/** The guest's request as the host takes it; anything else is the guest's bug (TOOL_VALIDATION). */
function requestOf(call: HostCall & { kind: 'tool' }): EgressRequest | { error: ReturnType<typeof failure> } {
  const invalid = (message: string) => ({ error: failure('TOOL_VALIDATION', `fetch: ${message}`) });
  if (EFFECTS[call.name] === undefined) return invalid(`no egress call ${call.name}`);
  const a = (call.args ?? {}) as Record<string, unknown>;
  if (typeof a.url !== 'string') return invalid('the request has no URL');
  if (typeof a.method !== 'string' || a.method === '') return invalid('the request has no method');
  const headers = a.headers ?? [];
  if (
    !Array.isArray(headers) ||
    !headers.every(
      (h): h is [string, string] =>
        Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string',
    )
  ) {
    return invalid('headers must be [name, value] pairs of strings');
  }
  const body = a.body ?? null;
  if (body !== null && typeof body !== 'string') return invalid('the body must be base64 text or null');
  const redirect = a.redirect ?? 'follow';
  if (redirect !== 'follow' && redirect !== 'manual' && redirect !== 'error') {
    return invalid('redirect must be follow, manual or error');
  }
  const method = a.method.toUpperCase();
  // A read is what recovery may run again: only a safe method without a body may come this way.
  if (call.name === 'read' && (!SAFE_METHODS.has(method) || body !== null)) {
    return invalid(`${method} with a body is not a read: it goes as egress.fetch`);
  }
  return { url: a.url, method, headers, body, redirect };
}
