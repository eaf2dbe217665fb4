import { ERROR_CODES } from './codes.ts';
import type { ErrorCode } from './codes.ts';

/** A failure with one of our codes, in the shape that crosses the sandbox boundary (`SerializedError` in spec). */
export interface CodedFailure {
  readonly code: ErrorCode;
  readonly name: string;
  readonly message: string;
  readonly details?: Record<string, unknown>;
}

/** The failure codecall reports with `code`, named as its row says (the name the guest sees). */
export function failure(code: ErrorCode, message: string, details?: Record<string, unknown>): CodedFailure {
  const { name } = ERROR_CODES[code];
  return details === undefined ? { code, name, message } : { code, name, message, details };
}
