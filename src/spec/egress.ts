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

/** The host side: makes one request under a task's rules; failures are CodecallErrors with EGRESS_* codes. */
export interface Egress {
  fetch(
    request: EgressRequest,
    access: NetworkAccess,
    options: {
      readonly signal: AbortSignal;
      /** Bodies over `above` bytes go to `put` as they are read, not into memory (ADR 0046); absent: all inline. */
      readonly spill?: {
        readonly above: number;
        put(chunks: AsyncIterable<Uint8Array>, options: { readonly signal: AbortSignal }): Promise<BodyRef>;
      };
    },
  ): Promise<EgressResponse>;
}
