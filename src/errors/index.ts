export { CodecallError, isCodecallError, toCodecallError } from './codecall-error.ts';
export type { CodecallErrorOptions } from './codecall-error.ts';
export { ERROR_CODES, httpStatusFor, isErrorCode } from './codes.ts';
export type { ErrorCode } from './codes.ts';
