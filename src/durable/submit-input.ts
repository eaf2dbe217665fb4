import { randomInt } from 'node:crypto';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import { resolveLimits } from '../sandbox/index.ts';
import type { CodeTaskInput, GuestLanguage, NewTaskAttributes } from '../spec/index.ts';
import { assertJsonValue } from './json-value.ts';
import type { SubmitInput } from './runtime-types.ts';

const LANGUAGES: readonly GuestLanguage[] = ['javascript', 'typescript', 'python'];
const TASK_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

function invalid(field: string, message: string): never {
  throw new CodecallError('INVALID_ARGUMENT', `${field} ${message}`, { details: { field } });
}

export function checkedCallbackUrl(url: unknown): string {
  if (typeof url !== 'string' || !URL.canParse(url)) invalid('callback_url', 'must be an absolute URL');
  return url;
}

/** The tasks of a batch, each checked; an error names the task (`tasks[i].field`) so the caller can fix that one. */
export function toBatchTasks(
  inputs: readonly SubmitInput[],
  tenant: string,
): { input: CodeTaskInput; attributes: NewTaskAttributes }[] {
  return inputs.map((input, i) => {
    try {
      return { input: toTaskInput(input), attributes: toTaskAttributes({ ...input, tenant }) };
    } catch (e) {
      if (isCodecallError(e) && typeof e.details.field === 'string') {
        const field = `tasks[${i}].${e.details.field}`;
        throw new CodecallError(e.code, `${field}: ${e.message}`, { details: { ...e.details, field } });
      }
      throw e;
    }
  });
}

/** Where the task belongs and how the queue treats it, checked like the program. */
export function toTaskAttributes(input: SubmitInput): NewTaskAttributes {
  const int = (field: string, v: unknown, min: number, max: number): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      invalid(field, `must be an integer from ${min} to ${max}`);
    }
    return v;
  };
  if (input.tenant !== undefined && !(typeof input.tenant === 'string' && NAME.test(input.tenant))) {
    invalid('tenant', 'must be 1-128 letters, digits or _ . : -');
  }
  if (input.sessionId !== undefined && !(typeof input.sessionId === 'string' && NAME.test(input.sessionId))) {
    invalid('session_id', 'must be 1-128 letters, digits or _ . : -');
  }
  if (input.callbackUrl !== undefined) checkedCallbackUrl(input.callbackUrl);
  return {
    ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
    ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
    ...(input.priority === undefined ? {} : { priority: int('priority', input.priority, -100, 100) }),
    ...(input.callbackUrl === undefined ? {} : { callbackUrl: input.callbackUrl }),
    ...(input.maxRetries === undefined ? {} : { maxRetries: int('max_retries', input.maxRetries, 0, 10) }),
    ...(input.deadlineAt === undefined
      ? {}
      : { deadlineAt: int('deadline', input.deadlineAt, 0, Number.MAX_SAFE_INTEGER) }),
  };
}

/**
 * Checks what a caller submits before anything is stored, so bad input is INVALID_ARGUMENT naming the field,
 * never a store error or a task that fails (or diverges) later: the seed must replay, the limits must hold.
 */
export function toTaskInput(input: SubmitInput): CodeTaskInput {
  const bad = invalid;
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
  const c = input.constraints;
  if (c !== undefined) {
    const names = (field: string, v: unknown): void => {
      if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0))) {
        bad(`tool_constraints.${field}`, 'must be a list of names');
      }
    };
    names('allowed_libraries', c.allowedLibraries);
    names('blocked_commands', c.blockedCommands);
    // quickjs programs reach nothing but their tools; a task must not believe it has a network.
    if (c.networkAccess === true && language !== 'python') {
      bad(
        'tool_constraints.network_access',
        `cannot be true: ${language} programs have no network (use a tool)`,
      );
    }
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
    ...(c && Object.keys(c).length > 0 ? { constraints: c } : {}),
  };
}
