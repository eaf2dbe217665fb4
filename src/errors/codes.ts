/** Every stable error code codecall emits, with its HTTP status (the one table that maps them). */
export const ERROR_CODES = {
  BAD_REQUEST: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INVALID_ARGUMENT: 400,
  INVALID_CONFIG: 400,
  SYNTAX_ERROR: 400,
  SOURCE_TOO_LARGE: 413,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  NO_SUCH_TOOL: 404,
  TOOL_VALIDATION: 422,
  TOOL_ERROR: 502,
  TOOL_RESULT_INVALID: 502,
  TOOL_CALL_LIMIT: 429,
  TOOL_REJECTED: 403,
  GUEST_ERROR: 422,
  RESULT_INVALID: 422,
  RESULT_LIMIT: 413,
  TIMEOUT: 408,
  // The sandbox's own limits: CPU time (apart from waiting), processes at once, one file's or the workspace's size.
  CPU_LIMIT: 408,
  PROCESS_LIMIT: 429,
  FILE_LIMIT: 413,
  MEMORY_LIMIT: 507,
  STACK_OVERFLOW: 422,
  OUTPUT_LIMIT: 413,
  INTERRUPTED: 409,
  ABORTED: 499,
  SANDBOX_CRASHED: 500,
  SANDBOX_UNAVAILABLE: 503,
  SERVICE_UNREACHABLE: 503,
  POOL_CLOSED: 503,
  FENCED: 409,
  VERSION_CONFLICT: 409,
  ILLEGAL_TRANSITION: 409,
  CHECKPOINT_CORRUPT: 500,
  STORE_CLOSED: 503,
  STORE_ERROR: 500,
  PAUSED: 409,
  CANCELLED: 409,
  REPLAY_DIVERGENCE: 409,
  CRASH_LOOP: 500,
  APPROVAL_REQUIRED: 409,
  INCOMPATIBLE_CHECKPOINT: 409,
  NEEDS_ATTENTION: 409,
  AWAITING_INPUT: 409,
  SHUTDOWN: 503,
  INPUT_TIMEOUT: 408,
  DEADLINE_EXCEEDED: 408,
  WEBHOOK_TARGET_REFUSED: 400,
  IDEMPOTENCY_CONFLICT: 422,
  // The provider, not our caller, refused or failed, so these are gateway errors: a 401 from the provider
  // is a server-side key problem and must not read as "your codecall credentials are wrong".
  MODEL_AUTH: 502,
  MODEL_UNAVAILABLE: 503,
  MODEL_BAD_REPLY: 502,
  MODEL_REQUEST_INVALID: 502,
  // The service has no model, so it cannot run instruction tasks (code tasks still work).
  MODEL_NOT_CONFIGURED: 503,
  // An agent used its max_steps model round trips without an answer.
  MAX_STEPS_EXCEEDED: 422,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export function httpStatusFor(code: string): number {
  return (ERROR_CODES as Record<string, number>)[code] ?? 500;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}
