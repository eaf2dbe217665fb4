import type { BodyRef } from './body-store.ts';

/**
 * Network egress (issue 21): the sandbox has no network interface; a task whose `network_access` allows it gets a
 * host-side `fetch`, and the host makes the request under these rules. The request and its response are a tool
 * call's arguments and outcome (`net.fetch`), so they are journaled and a replay sees the same bytes.
 */

/** A task's `tool_constraints.network_access` when it allows anything (validated, camelCase). */
export interface NetworkAccess {
  /**
   * Destinations: `api.example.com` (that host, port 443, or 80 where http is allowed), `*.github.com` (any
   * subdomain, not the name itself), `host:8443` (that port only). Names only, lower case; no paths, no schemes.
   */
  readonly allow: readonly string[];
  /** Methods allowed (upper case); absent: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS. */
  readonly methods?: readonly string[];
  /** Requests the task may make over its whole life (replays do not count again); absent: the operator's ceiling. */
  readonly maxRequests?: number;
  /** Most bytes of one response body; absent: the operator's ceiling. */
  readonly maxBytes?: number;
  /** Most seconds one request may take, redirects included; absent: the operator's ceiling. */
  readonly timeoutSeconds?: number;
  /** Plain http allowed as well as https (off by default). */
  readonly allowHttp?: boolean;
}

/** What the guest asks the host to fetch (the `net.fetch` call's arguments, journaled as given). */
export interface EgressRequest {
  readonly url: string;
  /** Upper case. */
  readonly method: string;
  /** In order, names as given; `{{secret:NAME}}` in a value is replaced by the host when a binding allows it. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body, base64; null for none. */
  readonly body: string | null;
  /** `follow` (default, each hop checked again), `manual` (a 3xx is the response) or `error` (a 3xx fails). */
  readonly redirect?: 'follow' | 'manual' | 'error';
  /**
   * The program's own timeout for this request, in seconds (Python's `urlopen(url, timeout=...)`), redirects
   * included; it only shortens the task's `timeout_seconds` and the operator's ceiling. Absent: theirs.
   */
  readonly timeoutSeconds?: number;
}

/** What the guest gets back (the `net.fetch` call's outcome, journaled). */
export interface EgressResponse {
  readonly status: number;
  readonly statusText: string;
  /** In order, names lower case, as received (secrets the host injected are never echoed here by the host). */
  readonly headers: readonly (readonly [string, string])[];
  /** The URL of the last hop. */
  readonly url: string;
  readonly redirected: boolean;
  /** The body, base64 ('' when it was stored out of line). */
  readonly body: string;
  /** A body over the spill threshold (ADR 0046): stored in the task's body store, read by ranges (`egress.body`). */
  readonly storedBody?: BodyRef;
  /** The allow entry that let the last hop through (`api.example.com`, `*.github.com`). */
  readonly allowedBy: string;
}

/** Who a request is made for, in its audit record (what the caller knows). */
export interface EgressAuditContext {
  readonly taskId?: string;
  readonly tenant?: string;
  /** The guest's call (`egress.read`/`egress.fetch`) the request is. */
  readonly callId?: string;
}

/**
 * What left the box (or was refused at it), one record per hop (a redirect's hops each have one): the operator's
 * audit trail. Never a header, a body, a query string or a secret: the destination, the method, the outcome and
 * sizes only.
 */
export interface EgressAuditRecord extends EgressAuditContext {
  /** When the hop started (ISO 8601). */
  readonly at: string;
  readonly method: string;
  /** `https` or `http`. */
  readonly scheme: string;
  /** The host name as the allow list matched it (an IPv6 literal in brackets). */
  readonly host: string;
  readonly port: number;
  /** The URL's path, without its query (which may carry tokens). */
  readonly path: string;
  /** The address connected to (pinned after resolution); null when refused or failed before connecting. */
  readonly address: string | null;
  /** The allow entry that let it through; null when none did. */
  readonly allowedBy: string | null;
  /** `ok` (an answer, whatever its status), `refused`, `limit`, `timeout`, `failed` or `aborted`. */
  readonly outcome: 'ok' | 'refused' | 'limit' | 'timeout' | 'failed' | 'aborted';
  /** The response's status; null without one. */
  readonly status: number | null;
  /** The error's code (EGRESS_REFUSED...) when it failed, and its `details.reason`, `cause` or `limit`. */
  readonly code: string | null;
  readonly reason: string | null;
  /** Bytes of the request body sent, and of the response body received (0 for a redirect's, dropped unread). */
  readonly requestBytes: number;
  readonly responseBytes: number;
  /** The response body went to the body store (ADR 0046). */
  readonly stored: boolean;
  /** Which hop of the request (0 the first, 1 after one redirect...). */
  readonly hop: number;
  readonly durationMs: number;
}

/** The host side: makes one request under a task's rules; failures are CodecallErrors with EGRESS_* codes. */
export interface Egress {
  fetch(
    request: EgressRequest,
    access: NetworkAccess,
    options: {
      readonly signal: AbortSignal;
      /** Named in the request's audit records (EgressOptions.audit). */
      readonly audit?: EgressAuditContext;
      /** The guest gave up on the request (HostCall.cancelled): aborted as by `signal`, with this reason. */
      readonly cancelled?: AbortSignal;
      /** Bodies over `above` bytes go to `put` as they are read, not into memory (ADR 0046); absent: all inline. */
      readonly spill?: {
        readonly above: number;
        put(chunks: AsyncIterable<Uint8Array>, options: { readonly signal: AbortSignal }): Promise<BodyRef>;
      };
    },
  ): Promise<EgressResponse>;
}
