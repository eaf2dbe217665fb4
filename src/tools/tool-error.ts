import { failure, isCodecallError } from '../errors/index.ts';
import type { SerializedError } from '../spec/index.ts';

const CODE_SHAPE = /^[A-Z][A-Z0-9_]{1,63}$/;

/**
 * Turns whatever a tool threw into data for the guest: code and message, never the host stack. Whatever its code,
 * it is a ToolError to the guest.
 */
export function serializeToolError(thrown: unknown): SerializedError {
  if (isCodecallError(thrown)) {
    return { code: thrown.code, message: thrown.message, name: 'ToolError', details: thrown.details };
  }
  if (thrown instanceof Error) {
    const code = (thrown as { code?: unknown }).code;
    if (typeof code === 'string' && CODE_SHAPE.test(code)) {
      return { code, message: thrown.message, name: 'ToolError' };
    }
    return failure('TOOL_ERROR', thrown.message);
  }
  return failure('TOOL_ERROR', typeof thrown === 'string' ? thrown : 'tool failed');
}
