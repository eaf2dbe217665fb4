import { encodeValue, sha256Hex } from '../codec/index.ts';
import { failure } from '../errors/index.ts';
import { OVERSIZE_STAND_IN_PREFIX } from '../spec/index.ts';
import type { SerializedError } from '../spec/index.ts';

/** Bounds on one tool call, measured on the tagged JSON the journal holds (ADR 0027). */
export interface CallSizeLimits {
  /** Largest encoded arguments of one call, in UTF-8 bytes of the tagged JSON; default 1 MiB. */
  readonly maxToolArgumentBytes?: number;
  /** Largest encoded successful result of one call; default 1 MiB. */
  readonly maxToolResultBytes?: number;
}

export const DEFAULT_MAX_TOOL_ARGUMENT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_TOOL_RESULT_BYTES = 1024 * 1024;

/**
 * What the journal holds for arguments over the bound instead of them: their size and digest. A replay checks
 * the size of the arguments the program asks with again, so the stand-in is never compared with them.
 */
export function oversizeStandIn(args: string): string {
  return encodeValue({ codecall_too_large: { bytes: Buffer.byteLength(args), sha256: sha256Hex(args) } });
}

/** The journaled arguments are (or look like) a stand-in for ones over the bound. */
export function isOversizeStandIn(args: string): boolean {
  return args.startsWith(OVERSIZE_STAND_IN_PREFIX);
}

/**
 * A tagged JSON text's UTF-8 size when it is over `max` bytes, else null. A UTF-16 code unit takes at most 3 bytes,
 * so a text of at most max/3 code units is within the bound without counting.
 */
function sizeOver(text: string, max: number): number | null {
  if (text.length <= max / 3) return null;
  const bytes = Buffer.byteLength(text);
  return bytes > max ? bytes : null;
}

/** The stand-in for arguments the driver refused before they crossed (their size, and digest when known). */
export function refusedStandIn(refused: { readonly bytes: number; readonly sha256?: string }): string {
  return encodeValue({ codecall_too_large: refused });
}

/** TOOL_ARGUMENTS_TOO_LARGE for arguments of `bytes` the driver refused (ExecutionLimits.toolArgumentBytes). */
export function refusedArguments(what: string, bytes: number, limits?: CallSizeLimits): SerializedError {
  const max = limits?.maxToolArgumentBytes ?? DEFAULT_MAX_TOOL_ARGUMENT_BYTES;
  return failure(
    'TOOL_ARGUMENTS_TOO_LARGE',
    `${what}: the arguments are ${bytes} bytes encoded, more than the ${max} a call may pass`,
    { bytes, max },
  );
}

/** TOOL_ARGUMENTS_TOO_LARGE for encoded arguments over the bound, else null. */
export function oversizeArguments(
  what: string,
  args: string,
  limits?: CallSizeLimits,
): SerializedError | null {
  const max = limits?.maxToolArgumentBytes ?? DEFAULT_MAX_TOOL_ARGUMENT_BYTES;
  const bytes = sizeOver(args, max);
  return bytes === null
    ? null
    : failure(
        'TOOL_ARGUMENTS_TOO_LARGE',
        `${what}: the arguments are ${bytes} bytes encoded, more than the ${max} a call may pass`,
        { bytes, max },
      );
}

/** TOOL_RESULT_TOO_LARGE for an encoded successful result over the bound, else null. */
export function oversizeResult(
  what: string,
  payload: string,
  limits?: CallSizeLimits,
): SerializedError | null {
  const max = limits?.maxToolResultBytes ?? DEFAULT_MAX_TOOL_RESULT_BYTES;
  const bytes = sizeOver(payload, max);
  return bytes === null
    ? null
    : failure(
        'TOOL_RESULT_TOO_LARGE',
        `${what}: the result is ${bytes} bytes encoded, more than the ${max} a call may return`,
        { bytes, max },
      );
}
