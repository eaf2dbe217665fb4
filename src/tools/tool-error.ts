import { isCodecallError } from '../errors/index.ts';
import type { SerializedError } from '../spec/index.ts';

const CODE_SHAPE = /^[A-Z][A-Z0-9_]{1,63}$/;

/** Turns whatever a tool threw into data for the guest: code and message, never the host stack. */
export function serializeToolError(thrown: unknown): SerializedError {
  if (isCodecallError(thrown)) {
    return { code: thrown.code, message: thrown.message, name: 'ToolError', details: thrown.details };
  }
  if (thrown instanceof Error) {
    const code = (thrown as { code?: unknown }).code;
    return {
      code: typeof code === 'string' && CODE_SHAPE.test(code) ? code : 'TOOL_ERROR',
      message: thrown.message,
      name: 'ToolError',
    };
  }
  return {
    code: 'TOOL_ERROR',
    message: typeof thrown === 'string' ? thrown : 'tool failed',
    name: 'ToolError',
  };
}
