import { expect } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { CodeTaskInput, ErrorCode } from '../../src/index.ts';

export const T0 = Date.UTC(2026, 0, 1);
export const LEASE = 30_000;

export function codeInput(code = 'return 1', seed = 7): CodeTaskInput {
  return { kind: 'code', code, language: 'javascript', seed };
}

export async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<CodecallError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ${code}, got a result`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CodecallError);
  expect((error as CodecallError).code).toBe(code);
  return error as CodecallError;
}
