import type { ExecutionResult, SerializedError } from '../spec/index.ts';

/**
 * The failure an abort ends an execution with, the same in every driver: a reason's string code is the code (a
 * CodecallError, or a plain `{ code, message }`); a reason without one (abort() with no argument, a plain Error)
 * is INTERRUPTED. It is named Error whatever its code: an interruption, not that code's own failure.
 */
export function abortFailure(reason: unknown): SerializedError {
  const r = reason as { code?: unknown; message?: unknown } | undefined;
  const code = typeof r?.code === 'string' ? r.code : 'INTERRUPTED';
  const message =
    typeof r?.message === 'string' && r.message !== '' ? r.message : 'the execution was interrupted';
  return { code, name: 'Error', message };
}

/** An execution refused before anything ran (bad limits, input or language): nothing used, nothing logged. */
export function failedBeforeStart(error: SerializedError): ExecutionResult {
  return {
    status: 'failed',
    error,
    logs: [],
    resources: { wallMs: 0, toolCalls: 0, memoryBytes: 0 },
  };
}
