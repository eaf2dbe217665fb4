import { CodecallError } from '../errors/index.ts';

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
  /** The body, base64. */
  readonly body: string;
  /** The allow entry that let the last hop through (`api.example.com`, `*.github.com`). */
  readonly allowedBy: string;
}

/** The host side: makes one request under a task's rules; failures are CodecallErrors with EGRESS_* codes. */
export interface Egress {
  fetch(
    request: EgressRequest,
    access: NetworkAccess,
    options: { readonly signal: AbortSignal },
  ): Promise<EgressResponse>;
}

/** Methods a task may use when its `network_access` names none. */
export const DEFAULT_EGRESS_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const MAX_ALLOW_ENTRIES = 100;
const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
// A name (`api.example.com`), a subdomain wildcard (`*.example.com`), an IPv4 or bracketed IPv6 literal; a port.
const ALLOW_ENTRY = new RegExp(
  `^(?:(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*|\\d{1,3}(?:\\.\\d{1,3}){3}|\\[[0-9a-f:.]+\\])(?::(\\d{1,5}))?$`,
);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A task's `network_access` checked (the form the runtime takes, camelCase): false or absent is none; `true` is
 * refused (say where: an allow list). Throws a CodecallError INVALID_ARGUMENT naming the wire field.
 */
export function checkNetworkAccess(
  value: unknown,
  field = 'tool_constraints.network_access',
): NetworkAccess | false {
  const bad = (at: string, message: string): never => {
    throw new CodecallError('INVALID_ARGUMENT', `${at} ${message}`, { details: { field: at } });
  };
  if (value === undefined || value === false) return false;
  if (value === true) bad(field, 'must say where: { allow: ["api.example.com", "*.example.org"] }');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) bad(field, 'must be an object or false');
  const v = value as Record<string, unknown>;
  const known = ['allow', 'methods', 'maxRequests', 'maxBytes', 'timeoutSeconds', 'allowHttp'];
  for (const k of Object.keys(v)) if (!known.includes(k)) bad(`${field}.${k}`, 'is not a known field');
  const allow = v.allow;
  if (!Array.isArray(allow) || allow.length === 0 || allow.length > MAX_ALLOW_ENTRIES) {
    bad(`${field}.allow`, `must be a list of 1-${MAX_ALLOW_ENTRIES} host names`);
  }
  const entries = (allow as unknown[]).map((e) => {
    const entry = typeof e === 'string' ? e.trim().toLowerCase().replace(/\.$/, '') : '';
    const port = ALLOW_ENTRY.exec(entry)?.[1];
    if (entry.length === 0 || entry.length > 260 || !ALLOW_ENTRY.test(entry) || (port && Number(port) > 65535)) {
      bad(
        `${field}.allow`,
        `has ${JSON.stringify(e)}: give a host name, *.domain or an IP address, optionally :port (no scheme or path)`,
      );
    }
    return entry;
  });
  const out: { -readonly [K in keyof NetworkAccess]: NetworkAccess[K] } = { allow: entries };
  if (v.methods !== undefined) {
    if (!Array.isArray(v.methods) || v.methods.length === 0) bad(`${field}.methods`, 'must be a list of methods');
    out.methods = (v.methods as unknown[]).map((m) => {
      if (typeof m !== 'string' || !TOKEN.test(m)) bad(`${field}.methods`, `has ${JSON.stringify(m)}: not a method`);
      const upper = (m as string).toUpperCase();
      if (upper === 'CONNECT' || upper === 'TRACE') bad(`${field}.methods`, `cannot allow ${upper}`);
      return upper;
    });
  }
  const positive = (k: 'maxRequests' | 'maxBytes', wire: string): void => {
    const n = v[k];
    if (n === undefined) return;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) bad(`${field}.${wire}`, 'must be a positive integer');
    out[k] = n as number;
  };
  positive('maxRequests', 'max_requests');
  positive('maxBytes', 'max_bytes');
  if (v.timeoutSeconds !== undefined) {
    const t = v.timeoutSeconds;
    if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > 86_400) {
      bad(`${field}.timeout_seconds`, 'must be a number of seconds above 0 and at most 86400');
    }
    out.timeoutSeconds = t as number;
  }
  if (v.allowHttp !== undefined) {
    if (typeof v.allowHttp !== 'boolean') bad(`${field}.allow_http`, 'must be a boolean');
    out.allowHttp = v.allowHttp as boolean;
  }
  return out;
}

/**
 * The wire's snake_case `network_access` in the runtime's form, renamed only: typed as what it should be, it is
 * checked where every submission is (`checkNetworkAccess`), which refuses `true` and any other shape.
 */
export function networkAccessFromWire(value: unknown): NetworkAccess | false {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value as false;
  const names: Record<string, string> = {
    max_requests: 'maxRequests',
    max_bytes: 'maxBytes',
    timeout_seconds: 'timeoutSeconds',
    allow_http: 'allowHttp',
  };
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [names[k] ?? k, x])) as unknown as NetworkAccess;
}
