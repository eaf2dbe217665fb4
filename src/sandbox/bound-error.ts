import type { SerializedError } from '../spec/index.ts';

/** The longest error message kept; the rest is cut, and the cut says how much went. */
export const MAX_ERROR_MESSAGE_CHARS = 16 * 1024;
const MAX_ERROR_NAME_CHARS = 256;
/** Details (a guest ToolError's) larger than this as JSON, or that do not serialize, are replaced by a note. */
export const MAX_ERROR_DETAILS_BYTES = 64 * 1024;

/**
 * A guest's error as the host keeps it: bounded like a result, since the host returns it, journals it and shows
 * it. Over a bound a text is cut with a marker rather than failing the execution with another code: the program
 * failed either way, and its message's start says why.
 */
export function boundError<E extends SerializedError>(error: E): E {
  const message = cut(error.message, MAX_ERROR_MESSAGE_CHARS);
  const name = error.name === undefined ? undefined : cut(error.name, MAX_ERROR_NAME_CHARS);
  const details = error.details === undefined ? undefined : boundDetails(error.details);
  if (message === error.message && name === error.name && details === error.details) return error;
  return {
    ...error,
    message,
    ...(name === undefined ? {} : { name }),
    ...(details === undefined ? {} : { details }),
  };
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return `${text.slice(0, end)}… [${text.length - end} more characters cut]`;
}

function boundDetails(details: Record<string, unknown>): Record<string, unknown> {
  let size: number;
  try {
    size = JSON.stringify(details).length;
  } catch {
    return { truncated: true, reason: 'the details could not be serialized' };
  }
  if (size <= MAX_ERROR_DETAILS_BYTES) return details;
  return { truncated: true, reason: `the details were ${size} bytes, over ${MAX_ERROR_DETAILS_BYTES}` };
}
