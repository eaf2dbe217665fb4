import { CodecallError, failure } from '../errors/index.ts';
import type { TaskBodies } from './body-store.ts';
import { bodyReadOf, serveBodyRead } from './egress-body-reads.ts';
import type { Egress, EgressAuditContext, EgressRequest, NetworkAccess } from './egress.ts';
import type { ExecutionHost, HostCall, HostOutcome } from './sandbox.ts';
import type { ToolEffect } from './tool.ts';

/**
 * What the guest's `fetch` calls (issue 21): `egress.read` for GET, HEAD and OPTIONS without a body (it reads, so
 * recovery may run it again), `egress.fetch` for the rest (an effect: a call in doubt needs a human). They are
 * host calls like a tool's, so a durable run journals them and a replay answers them with the same bytes.
 */
export const EGRESS_NAMESPACE = 'egress';
export const EGRESS_EFFECTS: Readonly<Record<string, ToolEffect>> = {
  read: 'read',
  fetch: 'unsafe',
  // A range of a stored body (ADR 0046): served from the task's body store, never journaled (isBodyRead).
  body: 'read',
};
export const EGRESS_BINDINGS = Object.keys(EGRESS_EFFECTS).map((name) => ({
  namespace: EGRESS_NAMESPACE,
  name,
}));
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Requests a task may make when neither it nor the operator says. */
export const DEFAULT_MAX_REQUESTS = 100;

export interface EgressHostOptions {
  readonly egress: Egress;
  readonly access: NetworkAccess;
  /** The operator's ceiling on requests per task (default DEFAULT_MAX_REQUESTS): the task's `maxRequests` is capped by it. */
  readonly maxRequests?: number | undefined;
  /** Ids of the calls already made (a durable task's journal): each counts once, a call run again does not. */
  readonly made?: Set<string>;
  /**
   * The largest response body the caller can keep (a durable run's journal holds it, base64, within the bound on
   * one call's result): a task's `maxBytes` and the egress's ceiling are capped by it.
   */
  readonly maxBodyBytes?: number;
  /**
   * The task's body store (ADR 0046): a body over `spillAbove` bytes is streamed there and the response names it;
   * only `network_access.max_bytes` and the egress's ceiling bound it then. Absent: bodies inline, as before.
   */
  readonly bodies?: TaskBodies;
  /** The size over which a body goes to `bodies` (default DEFAULT_SPILL_ABOVE), capped by `maxBodyBytes`. */
  readonly spillAbove?: number;
  /** Named in each request's audit records (the call's id is added). */
  readonly audit?: EgressAuditContext;
}

/** Bodies over this many bytes are stored out of line when the task has a body store. */
export const DEFAULT_SPILL_ABOVE = 64 * 1024;

/** `inner` with the egress calls served by `egress` under `access`; every other call goes to `inner`. */
export function egressHost(inner: ExecutionHost, options: EgressHostOptions): ExecutionHost {
  const made = options.made ?? new Set<string>();
  const ceiling = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const budget = Math.min(options.access.maxRequests ?? ceiling, ceiling);
  const cap = options.maxBodyBytes;
  const { bodies } = options;
  // With a body store only the inline part must fit a call's result; without one, the whole body.
  const access =
    cap === undefined || bodies !== undefined
      ? options.access
      : { ...options.access, maxBytes: Math.min(options.access.maxBytes ?? cap, cap) };
  const spill = bodies && {
    above: Math.min(options.spillAbove ?? DEFAULT_SPILL_ABOVE, cap ?? Infinity),
    put: (chunks: AsyncIterable<Uint8Array>, o: { readonly signal: AbortSignal }) => bodies.put(chunks, o),
  };
  const serve = async (call: HostCall & { kind: 'tool' }, signal: AbortSignal): Promise<HostOutcome> => {
    if (call.name === 'body') return serveBodyRead(bodyReadOf(call), bodies, signal);
    const request = egressRequestOf(call);
    if ('error' in request) return { ok: false, error: request.error };
    // Given up before it went out (waiting for a slot): no request is made, none is counted.
    if (call.cancelled?.aborted)
      return { ok: false, error: failure('ABORTED', 'fetch: the program aborted the request') };
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
      return {
        ok: true,
        value: await options.egress.fetch(request, access, {
          signal,
          // The guest may give up on the request (its fetch's signal): aborted like the execution's end.
          ...(call.cancelled ? { cancelled: call.cancelled } : {}),
          audit: { ...options.audit, callId: call.callId },
          ...(spill ? { spill } : {}),
        }),
      };
    } catch (error) {
      if (error instanceof CodecallError)
        return { ok: false, error: failure(error.code, error.message, error.details) };
      throw error;
    }
  };
  return {
    ...inner,
    call: (call, signal) =>
      call.kind === 'tool' && call.namespace === EGRESS_NAMESPACE
        ? serve(call, signal)
        : inner.call(call, signal),
  };
}

/** The guest's request as the host takes it; anything else is the guest's bug (TOOL_VALIDATION). */
export function egressRequestOf(
  call: HostCall & { kind: 'tool' },
): EgressRequest | { error: ReturnType<typeof failure> } {
  const invalid = (message: string) => ({ error: failure('TOOL_VALIDATION', `fetch: ${message}`) });
  if (EGRESS_EFFECTS[call.name] === undefined || call.name === 'body')
    return invalid(`no egress call ${call.name}`);
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
  const timeout = a.timeoutSeconds;
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0)) {
    return invalid('timeoutSeconds must be a number of seconds above 0');
  }
  return {
    url: a.url,
    method,
    headers,
    body,
    redirect,
    ...(timeout === undefined ? {} : { timeoutSeconds: timeout }),
  };
}
