import { z } from 'zod';

const secretBinding = z
  .object({
    /** The name a request header uses: `Authorization: Bearer {{secret:github}}`. */
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -'),
    /** The destinations it may go to (allow-entry patterns: `api.github.com`, `*.example.org`, `host:8443`). */
    hosts: z.array(z.string().min(1).max(260)).min(1).max(100),
    /** The environment variable holding its value: the value itself is never in a config file or a flag. */
    env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
  })
  .strict();

/** What programs' `fetch` may do on this server, over every task (issue 21): ceilings and secrets. */
export const egressConfigShape = {
  /** Lets tasks' requests go to loopback, private and link-local addresses (tests, a service inside one network). */
  egressAllowPrivate: z.boolean().default(false),
  /** Requests one task may make over its life; a task's `network_access.max_requests` may only be lower. */
  egressMaxRequests: z.number().int().min(1).max(1_000_000).default(100),
  /** Bytes of one response body; a task's `max_bytes` may only be lower. */
  egressMaxBytes: z
    .number()
    .int()
    .min(1)
    .max(1024 ** 3)
    .default(10 * 1024 * 1024),
  /** Seconds one request may take with its redirects; a task's `timeout_seconds` may only be lower. */
  egressTimeoutSeconds: z.number().gt(0).max(3600).default(30),
  /**
   * The audit trail of what left the box: one log line per request hop (`egress {json}`: task, tenant, call,
   * destination, address, method, path without query, allow entry, outcome, status, sizes; never headers, bodies
   * or secrets).
   */
  egressAudit: z.boolean().default(true),
  /**
   * Secrets bound to destinations, `[{ "name": "github", "hosts": ["api.github.com"], "env": "GITHUB_TOKEN" }]`
   * (the environment gives it as that JSON): a request header's `{{secret:github}}` becomes the value of
   * GITHUB_TOKEN on the way out to those hosts only; it never enters the sandbox, the journal or a log.
   */
  /**
   * Each tenant's network policy, `{ "acme": { "allow": ["*.acme.com"], "max_requests": 20 }, "*": { ... } }` (the
   * environment gives it as that JSON; `*`: every tenant not named): a ceiling on its tasks' `network_access`, in
   * the same form, checked at submit and applied again at each run.
   */
  egressTenants: z
    .preprocess((v) => (typeof v === 'string' ? parseJson(v) : v), z.record(z.string().min(1), z.unknown()))
    .default({}),
  /**
   * Each tenant's default network access, `{ "acme": { "allow": ["api.acme.com"] }, "*": { ... } }` (as
   * egressTenants): what its tasks that say nothing of `network_access` get (a task's `false` opts out), within
   * its policy; applied at each run. Default: none, such a task has no network.
   */
  egressDefaults: z
    .preprocess((v) => (typeof v === 'string' ? parseJson(v) : v), z.record(z.string().min(1), z.unknown()))
    .default({}),
  egressSecrets: z
    .preprocess((v) => (typeof v === 'string' ? parseJson(v) : v), z.array(secretBinding).max(100))
    .default([]),
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
