import { encodeValue, sha256Hex } from '../codec/index.ts';
import { failure } from '../errors/index.ts';
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

const STAND_IN_PREFIX = '{"codecall_too_large":';

/** The journaled arguments are a stand-in for ones over the bound (the program's own arguments never are). */
export function isOversizeStandIn(args: string): boolean {
  return args.startsWith(STAND_IN_PREFIX);
}

export function argumentsTooLarge(what: string, size: number, max: number): SerializedError {
  return failure(
    'TOOL_ARGUMENTS_TOO_LARGE',
    `${what}: the arguments are ${size} bytes encoded, more than the ${max} a call may pass`,
    { bytes: size, max },
  );
}

export function resultTooLarge(what: string, size: number, max: number): SerializedError {
  return failure(
    'TOOL_RESULT_TOO_LARGE',
    `${what}: the result is ${size} bytes encoded, more than the ${max} a call may return`,
    { bytes: size, max },
  );
}

/** A tagged JSON text's size in UTF-8 bytes (a text longer in code units than `max` is over without counting). */
export function encodedBytes(text: string): number {
  return Buffer.byteLength(text);
}
