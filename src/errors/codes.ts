/**
 * What a code is about; docs/errors.md says what each kind means. The decisions a code drives are columns of its
 * row, not of its kind: codes of one kind differ (a STORE_ERROR is retried, a STORE_CLOSED is not).
 */
export const ERROR_KINDS = ['input', 'guest', 'tool', 'limit', 'control', 'model', 'infrastructure'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** One code's row: everything a decision about a failure with this code reads. */
export interface ErrorRow {
  /** The HTTP status the API answers with. */
  readonly status: number;
  readonly kind: ErrorKind;
  /** A task run that ends in it runs again (replaying its journal) while the task has retries left. */
  readonly retryable: boolean;
  /** The `name` of the failure codecall builds with this code, as the guest (and the result) sees it. */
  readonly name: string;
  /** A run that ends in it leaves the task paused, unless a cancel was asked meanwhile. */
  readonly pauses: boolean;
  /** An agent step's run that ends in it ends the agent's run; any other failure goes back to the model. */
  readonly endsRun: boolean;
  /** Building a webhook's body failed for now: the message stays pending (any other failure is permanent). */
  readonly transient: boolean;
  /**
   * A guest's report of it is believed: an error the program raises or re-raises, or a limit only the inside of
   * a sandbox sees and the program can reach at will. Any other code of ours that a program (or the sandbox side
   * it controls) reports becomes a GUEST_ERROR: pauses, cancels, limits the host counts and the machinery's
   * failures come only from what the host observed (guest-failure.ts).
   */
  readonly fromGuest: boolean;
}

function row(
  status: number,
  kind: ErrorKind,
  more: Partial<Omit<ErrorRow, 'status' | 'kind'>> = {},
): ErrorRow {
  return {
    status,
    kind,
    retryable: false,
    name: 'Error',
    pauses: false,
    endsRun: false,
    transient: false,
    fromGuest: false,
    ...more,
  };
}

const PAUSES = { pauses: true, endsRun: true } as const;
const GUEST = { fromGuest: true } as const;

/** Every stable error code codecall emits, one row each (the one table; docs/errors.md is checked against it). */
export const ERROR_CODES = {
  BAD_REQUEST: row(400, 'input'),
  PAYLOAD_TOO_LARGE: row(413, 'input'),
  UNSUPPORTED_MEDIA_TYPE: row(415, 'input'),
  // GET or DELETE /mcp: the MCP endpoint is stateless (ADR 0049).
  METHOD_NOT_ALLOWED: row(405, 'input'),
  INVALID_ARGUMENT: row(400, 'input'),
  // A JSON body nested deeper than the server reads (refused before it is parsed).
  JSON_TOO_DEEP: row(400, 'input'),
  INVALID_CONFIG: row(400, 'input'),
  // An allowed_libraries entry that is not a module name or 'pkg.*' (ADR 0041).
  INVALID_LIBRARY_PATTERN: row(400, 'input'),
  SYNTAX_ERROR: row(400, 'guest', { name: 'SyntaxError', ...GUEST }),
  SOURCE_TOO_LARGE: row(413, 'limit'),
  SOURCE_TOO_COMPLEX: row(422, 'limit'),
  UNAUTHORIZED: row(401, 'input'),
  KEY_REVOKED: row(401, 'input'),
  FORBIDDEN: row(403, 'input'),
  APPROVER_NOT_ALLOWED: row(403, 'input'),
  NOT_FOUND: row(404, 'input'),
  // A tool call's failures: the guest catches them as the class `name` (its guest runtimes define these).
  NO_SUCH_TOOL: row(404, 'tool', { name: 'NoSuchToolError', ...GUEST }),
  TOOL_VALIDATION: row(422, 'tool', { name: 'ToolValidationError', ...GUEST }),
  TOOL_ERROR: row(502, 'tool', { name: 'ToolError', ...GUEST }),
  TOOL_RESULT_INVALID: row(502, 'tool', { name: 'ToolError', ...GUEST }),
  TOOL_CALL_LIMIT: row(429, 'limit'),
  // One call's encoded arguments or result over its bound (ADR 0027): the guest catches them as a ToolError.
  TOOL_ARGUMENTS_TOO_LARGE: row(413, 'tool', { name: 'ToolError', ...GUEST }),
  TOOL_RESULT_TOO_LARGE: row(413, 'tool', { name: 'ToolError', ...GUEST }),
  // An MCP server's tool answered isError, or the server refused the call (ADR 0047).
  MCP_TOOL_ERROR: row(502, 'tool', { name: 'ToolError', ...GUEST }),
  // An MCP server could not be started or reached, or its connection ended (ADR 0047).
  MCP_UNAVAILABLE: row(503, 'tool', { name: 'ToolError', ...GUEST }),
  // An MCP call got no answer in time (its timeout, or its bound in all): in doubt (ADR 0047).
  MCP_TIMEOUT: row(504, 'tool', { name: 'ToolError', ...GUEST }),
  // A call past one of its task's budgets (ADR 0044): refused before it runs, journaled as refused, caught as a ToolError.
  TOOL_BUDGET_EXCEEDED: row(429, 'tool', { name: 'ToolError', ...GUEST }),
  // A call past its tenant's rate limit or quota (ADR 0045): refused before it runs, journaled as refused;
  // `details.retry_after_seconds` says when to try again.
  TOOL_RATE_LIMITED: row(429, 'tool', { name: 'ToolError', ...GUEST }),
  TOOL_QUOTA_EXCEEDED: row(429, 'tool', { name: 'ToolError', ...GUEST }),
  // A key or tenant holds as many event streams open as it may (Retry-After tells when to try again).
  TOO_MANY_STREAMS: row(429, 'limit'),
  // A tenant past its share of the server's event loop while others are active (ADR 0039); Retry-After says when.
  TOO_MANY_REQUESTS: row(429, 'limit'),
  // A tenant holds maxLiveTasksPerTenant tasks not yet ended: a queue flood cannot grow the database without bound.
  TOO_MANY_TASKS: row(429, 'limit'),
  TOOL_REJECTED: row(403, 'tool', { name: 'ToolRejectedError', ...GUEST }),
  // No one decided in time (ADR 0031): the guest catches it as a rejection; a late decision is a 409.
  APPROVAL_EXPIRED: row(409, 'tool', { name: 'ToolRejectedError', ...GUEST }),
  GUEST_ERROR: row(422, 'guest', GUEST),
  RESULT_INVALID: row(422, 'guest', GUEST),
  RESULT_LIMIT: row(413, 'limit'),
  TIMEOUT: row(408, 'limit'),
  // The sandbox's own limits: CPU time (apart from waiting), processes at once, one file's or the workspace's size.
  CPU_LIMIT: row(408, 'limit'),
  PROCESS_LIMIT: row(429, 'limit', GUEST),
  FILE_LIMIT: row(413, 'limit', GUEST),
  MEMORY_LIMIT: row(507, 'limit', GUEST),
  STACK_OVERFLOW: row(422, 'limit', { name: 'RangeError', ...GUEST }),
  OUTPUT_LIMIT: row(413, 'limit'),
  // The task's journal would grow past maxJournalBytes / maxJournalEntries: the run fails, what it holds stays.
  JOURNAL_LIMIT: row(413, 'limit', { endsRun: true }),
  INTERRUPTED: row(409, 'control'),
  ABORTED: row(499, 'control', { endsRun: true, transient: true }),
  // Failures of the machinery, not of the program, are retried; a guest's own error, limit or timeout never is.
  SANDBOX_CRASHED: row(500, 'infrastructure', { retryable: true, endsRun: true }),
  SANDBOX_UNAVAILABLE: row(503, 'infrastructure', { retryable: true, endsRun: true }),
  SERVICE_UNREACHABLE: row(503, 'infrastructure'),
  POOL_CLOSED: row(503, 'infrastructure', { retryable: true, endsRun: true }),
  // A tool's service (an MCP server) could not be reached during a durable run: the run ends without journaling
  // the call, the task runs again after a backoff, and once its retries are spent it pauses needs_attention.
  TOOL_UNAVAILABLE: row(503, 'infrastructure', { retryable: true, endsRun: true }),
  FENCED: row(409, 'infrastructure', { endsRun: true }),
  VERSION_CONFLICT: row(409, 'infrastructure'),
  ILLEGAL_TRANSITION: row(409, 'input'),
  CHECKPOINT_CORRUPT: row(500, 'infrastructure', { endsRun: true }),
  STORE_CLOSED: row(503, 'infrastructure', { endsRun: true, transient: true }),
  STORE_ERROR: row(500, 'infrastructure', { retryable: true, endsRun: true, transient: true }),
  // The store cannot commit for a reason an operator fixes (disk full, read-only, unopenable): /readyz, a start.
  STORE_UNAVAILABLE: row(503, 'infrastructure', { retryable: true, endsRun: true, transient: true }),
  // The audit key given is not the one the database was keyed with (ADR 0030): a start or an open is refused.
  AUDIT_KEY_MISMATCH: row(500, 'infrastructure', { endsRun: true }),
  PAUSED: row(409, 'control', PAUSES),
  CANCELLED: row(409, 'control', { endsRun: true }),
  REPLAY_DIVERGENCE: row(409, 'infrastructure', { endsRun: true }),
  // The sandboxed side wrote what the protocol forbids (a forged message, a duplicate or out-of-order call id).
  PROTOCOL_VIOLATION: row(422, 'guest'),
  CRASH_LOOP: row(500, 'infrastructure'),
  APPROVAL_REQUIRED: row(409, 'control', PAUSES),
  INCOMPATIBLE_CHECKPOINT: row(409, 'infrastructure'),
  NEEDS_ATTENTION: row(409, 'control', PAUSES),
  AWAITING_INPUT: row(409, 'control', PAUSES),
  SHUTDOWN: row(503, 'control', PAUSES),
  // The server listens but its sandboxes are still starting: /readyz answers 503 until they are ready.
  STARTING: row(503, 'infrastructure'),
  TOO_MANY_CONNECTIONS: row(503, 'limit'),
  HEADERS_TOO_LARGE: row(431, 'input'),
  REQUEST_TIMEOUT: row(408, 'input'),
  // `codecall serve` found its port taken (another server on it?): it exits before opening anything.
  PORT_IN_USE: row(409, 'input'),
  // DNS rebinding and other sites' pages (ADR 0022): a Host the server does not answer to; a browser's request
  // from another origin to a server without API keys.
  HOST_NOT_ALLOWED: row(421, 'input'),
  CROSS_ORIGIN_REFUSED: row(403, 'input'),
  INPUT_TIMEOUT: row(408, 'tool', { name: 'InputTimeoutError', ...GUEST }),
  DEADLINE_EXCEEDED: row(408, 'limit', { endsRun: true }),
  WEBHOOK_TARGET_REFUSED: row(400, 'input'),
  // A task's network request (issue 21): the guest catches these as a ToolError. The host alone observes them, so
  // a guest's claim of one is not believed (it could pose as a refusal or a limit the host never met).
  EGRESS_REFUSED: row(403, 'tool', { name: 'ToolError', ...GUEST }),
  EGRESS_LIMIT: row(413, 'tool', { name: 'ToolError', ...GUEST }),
  EGRESS_TIMEOUT: row(504, 'tool', { name: 'ToolError', ...GUEST }),
  EGRESS_FAILED: row(502, 'tool', { name: 'ToolError', ...GUEST }),
  IDEMPOTENCY_CONFLICT: row(422, 'input'),
  // The provider, not our caller, refused or failed, so these are gateway errors: a 401 from the provider
  // is a server-side key problem and must not read as "your codecall credentials are wrong".
  MODEL_AUTH: row(502, 'model'),
  MODEL_UNAVAILABLE: row(503, 'model', { retryable: true }),
  MODEL_BAD_REPLY: row(502, 'model'),
  MODEL_REQUEST_INVALID: row(502, 'model'),
  // The service has no model, so it cannot run instruction tasks (code tasks still work).
  MODEL_NOT_CONFIGURED: row(503, 'model'),
  // Toolformer scoring (issue 24): the text to score splits inside one of the model's tokens, so no run of its
  // tokens is exactly the continuation; the sample is dropped with this reason (ADR 0052).
  TOOLFORMER_TOKEN_BOUNDARY: row(422, 'input'),
  // An agent used its max_steps model round trips without an answer.
  MAX_STEPS_EXCEEDED: row(422, 'limit'),
  // Constrained decoding (ADR 0051): a schema the grammar compiler cannot read, a keyword it cannot enforce (in
  // strict mode), a grammar past its size or ambiguity bounds, a grammar asked as a regex that is not regular.
  GRAMMAR_INVALID_SCHEMA: row(400, 'input'),
  GRAMMAR_UNSUPPORTED: row(422, 'input'),
  GRAMMAR_TOO_LARGE: row(413, 'limit'),
  GRAMMAR_TOO_COMPLEX: row(422, 'limit'),
  GRAMMAR_NOT_REGULAR: row(422, 'input'),
  GRAMMAR_REJECTED: row(422, 'model'),
  INTERNAL: row(500, 'infrastructure', { endsRun: true }),
} satisfies Record<string, ErrorRow>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** The row of `code`; undefined for a code that is not ours (a tool's own, say), which no decision knows. */
export function errorRow(code: string): ErrorRow | undefined {
  return isErrorCode(code) ? ERROR_CODES[code] : undefined;
}

export function httpStatusFor(code: string): number {
  return errorRow(code)?.status ?? 500;
}
