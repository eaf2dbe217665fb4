export { CodecallError, isCodecallError, toCodecallError } from './codecall-error.ts';
export type { CodecallErrorOptions } from './codecall-error.ts';
export { ERROR_CODES, ERROR_KINDS, errorRow, httpStatusFor, isErrorCode } from './codes.ts';
export type { ErrorCode, ErrorKind, ErrorRow } from './codes.ts';
export { failure } from './failure.ts';
export type { CodedFailure } from './failure.ts';
