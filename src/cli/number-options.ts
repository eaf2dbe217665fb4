import { CodecallError } from '../errors/index.ts';

/** A flag's value as a positive number (`--timeout 2.5`), or INVALID_ARGUMENT naming the flag. */
export function positiveOption(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) {
    throw new CodecallError('INVALID_ARGUMENT', `${flag} must be a positive number`);
  }
  return n;
}

/** A flag's value as an integer, within bounds when given, or INVALID_ARGUMENT naming the flag. */
export function integerOption(
  flag: string,
  text: string,
  bounds: { min: number; max: number } = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max) {
    const range = bounds.min === Number.MIN_SAFE_INTEGER ? '' : ` from ${bounds.min} to ${bounds.max}`;
    throw new CodecallError('INVALID_ARGUMENT', `${flag} must be an integer${range}`);
  }
  return n;
}
