import type { ExecutionResult } from '../spec/index.ts';

/**
 * An abort reason as a failure's code and message, the same in every driver: a reason's string code is the code (a
 * CodecallError, or a plain `{ code, message }`); a reason without one (abort() with no argument, a plain Error)
 * is INTERRUPTED.
 */
export function abortReason(reason: unknown): [string, string] {
  const r = reason as { code?: unknown; message?: unknown } | undefined;
  const code = typeof r?.code === 'string' ? r.code : 'INTERRUPTED';
  const message =
    typeof r?.message === 'string' && r.message !== '' ? r.message : 'the execution was interrupted';
  return [code, message];
}

/** An execution refused before anything ran (bad limits, input or language): nothing used, nothing logged. */
export function failedBeforeStart(code: string, message: string): ExecutionResult {
  return {
    status: 'failed',
    error: { code, name: 'Error', message },
    logs: [],
    resources: { wallMs: 0, toolCalls: 0, memoryBytes: 0 },
  };
}
