import { CodecallError } from '../errors/index.ts';

const MAX_DEPTH = 100;

/**
 * A value a human or caller hands a task (an input, a skipped call's result, metadata) must be plain JSON, so that
 * what the program sees is exactly what was given: no NaN or Infinity turned into null, no undefined dropped, no
 * Date, BigInt, Map or class instance. INVALID_ARGUMENT names the first offending path.
 */
export function assertJsonValue(value: unknown, what: string): unknown {
  check(value, what, '$', 0);
  return value;
}

function check(value: unknown, what: string, path: string, depth: number): void {
  const refuse = (why: string): never => {
    throw new CodecallError('INVALID_ARGUMENT', `${what} must be JSON: ${path} ${why}`, {
      details: { path },
    });
  };
  if (depth > MAX_DEPTH) refuse(`is nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) refuse(`is ${String(value)}`);
    return;
  }
  if (typeof value !== 'object') refuse(`is ${value === undefined ? 'undefined' : `a ${typeof value}`}`);
  if (Array.isArray(value)) {
    value.forEach((v: unknown, i) => check(v, what, `${path}[${i}]`, depth + 1));
    return;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) refuse('is not a plain object');
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    check(v, what, `${path}.${k}`, depth + 1);
  }
}
