import { errorRow } from './codes.ts';
import type { ErrorCode } from './codes.ts';

export interface CodecallErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error base class: a stable string `code`, structured `details`, a `cause`, and `retryable`. */
export class CodecallError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  /** Read from the code's row: a task run that ends in this error runs again while it has retries left. */
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: CodecallErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CodecallError';
    this.code = code;
    this.details = options.details ?? {};
    this.retryable = errorRow(code)?.retryable ?? false;
  }

  toJSON(): { code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isCodecallError(value: unknown): value is CodecallError {
  return value instanceof CodecallError;
}

/** Wraps anything thrown into a CodecallError, keeping the original as `cause`. */
export function toCodecallError(value: unknown, fallback: ErrorCode = 'INTERNAL'): CodecallError {
  if (value instanceof CodecallError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new CodecallError(fallback, message, { cause: value });
}
