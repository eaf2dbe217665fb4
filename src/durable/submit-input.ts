import { randomInt } from 'node:crypto';
import { CodecallError } from '../errors/index.ts';
import { resolveLimits } from '../sandbox/index.ts';
import type { CodeTaskInput, GuestLanguage } from '../spec/index.ts';
import { assertJsonValue } from './json-value.ts';
import type { SubmitInput } from './runtime-types.ts';

const LANGUAGES: readonly GuestLanguage[] = ['javascript', 'typescript', 'python'];
const TASK_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Checks what a caller submits before anything is stored, so bad input is INVALID_ARGUMENT naming the field,
 * never a store error or a task that fails (or diverges) later: the seed must replay, the limits must hold.
 */
export function toTaskInput(input: SubmitInput): CodeTaskInput {
  const bad = (field: string, message: string): never => {
    throw new CodecallError('INVALID_ARGUMENT', `${field} ${message}`, { details: { field } });
  };
  if (typeof input.code !== 'string' || input.code.length === 0) bad('code', 'must be a non-empty string');
  const language = input.language ?? 'javascript';
  if (!LANGUAGES.includes(language)) bad('language', `must be one of ${LANGUAGES.join(', ')}`);
  const seed = input.seed ?? randomInt(2 ** 31);
  if (!Number.isInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 31)
    bad('seed', 'must be a 32-bit integer');
  if (input.limits) resolveLimits(input.limits);
  if (input.tools && !(Array.isArray(input.tools) && input.tools.every((t) => typeof t === 'string'))) {
    bad('tools', 'must be a list of tool names');
  }
  if (input.metadata !== undefined) {
    if (input.metadata === null || typeof input.metadata !== 'object' || Array.isArray(input.metadata)) {
      bad('metadata', 'must be an object');
    }
    assertJsonValue(input.metadata, 'metadata');
  }
  if (input.id !== undefined && !TASK_ID.test(input.id)) {
    bad('id', 'must be 1-128 letters, digits or _ . : -');
  }
  return {
    kind: 'code',
    code: input.code,
    language,
    seed,
    ...(input.limits ? { limits: input.limits } : {}),
    ...(input.tools ? { tools: input.tools } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
  };
}
