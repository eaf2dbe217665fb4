import { randomInt } from 'node:crypto';
import { parseTraceHeaders } from '../telemetry/index.ts';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import {
  AGENT_MODES,
  checkLibraryPatterns,
  checkNetworkAccess,
  checkTaskBudgets,
  GUEST_LANGUAGES,
  isGuestLanguage,
  isWorkspaceName,
  resolveLimits,
} from '../spec/index.ts';
import type { NewTaskAttributes, TaskConstraints, TaskFile, TaskInput, TraceContext } from '../spec/index.ts';
import { assertJsonValue } from '../codec/index.ts';
import type { SubmitInput } from '../api/index.ts';

const TASK_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const MODEL = /^[A-Za-z0-9_.:/@-]{1,200}$/;

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
  check: (input: SubmitInput) => void = () => undefined,
  now: number = Date.now(),
): { input: TaskInput; attributes: NewTaskAttributes }[] {
  return inputs.map((input, i) => {
    try {
      check(input);
      return { input: toTaskInput(input), attributes: toTaskAttributes({ ...input, tenant }, now) };
    } catch (e) {
      if (isCodecallError(e) && typeof e.details.field === 'string') {
        const field = `tasks[${i}].${e.details.field}`;
        throw new CodecallError(e.code, `${field}: ${e.message}`, { details: { ...e.details, field } });
      }
      throw e;
    }
  });
}

/** Where the task belongs and how the queue treats it, checked like the program; `now` starts deadlineSeconds. */
export function toTaskAttributes(input: SubmitInput, now: number = Date.now()): NewTaskAttributes {
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
  const s = input.deadlineSeconds;
  if (s !== undefined) {
    if (input.deadlineAt !== undefined) invalid('deadline_seconds', 'cannot be given with deadlineAt');
    if (typeof s !== 'number' || !Number.isFinite(s) || s <= 0)
      invalid('deadline_seconds', 'must be a positive number');
  }
  const deadlineAt = s === undefined ? input.deadlineAt : now + Math.round(s * 1000);
  return {
    ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
    ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
    ...(input.priority === undefined ? {} : { priority: int('priority', input.priority, -100, 100) }),
    ...(input.callbackUrl === undefined ? {} : { callbackUrl: input.callbackUrl }),
    ...(input.maxRetries === undefined ? {} : { maxRetries: int('max_retries', input.maxRetries, 0, 10) }),
    ...(deadlineAt === undefined
      ? {}
      : { deadlineAt: int('deadline', deadlineAt, 0, Number.MAX_SAFE_INTEGER) }),
  };
}

/**
 * Checks what a caller submits before anything is stored, so bad input is INVALID_ARGUMENT naming the field,
 * never a store error or a task that fails (or diverges) later: the seed must replay, the limits must hold.
 */
export function toTaskInput(input: SubmitInput): TaskInput {
  const bad = invalid;
  if (input.code !== undefined && input.instruction !== undefined) {
    bad('instruction', 'cannot be given with code: send the program (code) or what to do (instruction)');
  }
  if (input.instruction === undefined) {
    if (typeof input.code !== 'string' || input.code.length === 0) bad('code', 'must be a non-empty string');
    for (const [field, v] of Object.entries(AGENT_FIELDS)) {
      if (input[v] !== undefined) bad(field, 'applies to instruction tasks only');
    }
  }
  const language = input.language ?? 'javascript';
  if (!isGuestLanguage(language)) bad('language', `must be one of ${GUEST_LANGUAGES.join(', ')}`);
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
  let constraints: TaskConstraints | undefined = c;
  if (c !== undefined) {
    const names = (field: string, v: unknown): void => {
      if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0))) {
        bad(`tool_constraints.${field}`, 'must be a list of names');
      }
    };
    names('allowed_libraries', c.allowedLibraries);
    if (c.allowedLibraries) checkLibraryPatterns('tool_constraints.allowed_libraries', c.allowedLibraries);
    if (c.allowSubprocesses !== undefined && typeof c.allowSubprocesses !== 'boolean') {
      bad('tool_constraints.allow_subprocesses', 'must be a boolean');
    }
    // quickjs starts no process at all: a JS task must not believe it may.
    if (c.allowSubprocesses === true && language !== 'python') {
      bad('tool_constraints.allow_subprocesses', `cannot be true: ${language} programs start no processes`);
    }
    names('blocked_commands', c.blockedCommands);
    // The sandbox has no network: `fetch` goes through the host, to the destinations allowed here (issue 21).
    // JavaScript has fetch; Python codecall.fetch, with urllib.request and http.client through it.
    const access = checkNetworkAccess(c.networkAccess);
    // Budgets of the task's tool calls (ADR 0044), enforced where each live call is decided.
    const budgets = checkTaskBudgets(c.budgets);
    const { networkAccess: _given, budgets: _asked, ...rest } = c;
    constraints = {
      ...rest,
      // An explicit false is kept: it opts out of the tenant's default access (egressDefaults).
      ...(access === false
        ? c.networkAccess === false
          ? { networkAccess: false }
          : {}
        : { networkAccess: access }),
      ...(budgets === null ? {} : { budgets }),
    };
  }
  if (input.files !== undefined) checkFiles(input.files);
  if (input.id !== undefined && !TASK_ID.test(input.id)) {
    bad('id', 'must be 1-128 letters, digits or _ . : -');
  }
  const common = {
    language,
    seed,
    ...(input.files && input.files.length > 0
      ? { files: input.files.map((f) => ({ name: f.name, data: f.data })) }
      : {}),
    ...(input.limits ? { limits: input.limits } : {}),
    ...(input.tools ? { tools: input.tools } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
    ...(constraints && Object.keys(constraints).length > 0 ? { constraints } : {}),
    ...traceContextOfInput(input.traceContext),
  };
  if (input.instruction === undefined) return { kind: 'code', code: input.code ?? '', ...common };
  return { kind: 'instruction', ...agentInput(input, input.instruction), ...common };
}

/** Input files of one task, decoded, at most this many bytes (the python workspace is 64 MiB by default). */
export const MAX_INPUT_FILE_BYTES = 32 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function checkFiles(files: unknown): void {
  if (!Array.isArray(files) || files.length > 1000) invalid('files', 'must be a list of at most 1000 files');
  const names = new Set<string>();
  let bytes = 0;
  (files as readonly Partial<Record<keyof TaskFile, unknown>>[]).forEach((f, i) => {
    const field = `files[${i}]`;
    const { name, data } = f ?? {};
    if (typeof name !== 'string' || !isWorkspaceName(name)) {
      invalid(`${field}.name`, 'must be a relative path without . or .. parts');
    }
    if (names.has(name)) invalid(`${field}.name`, `repeats ${JSON.stringify(name)}`);
    names.add(name);
    if (typeof data !== 'string' || data.length % 4 !== 0 || !BASE64.test(data)) {
      invalid(`${field}.data`, 'must be base64');
    }
    bytes += (data.length / 4) * 3;
  });
  if (bytes > MAX_INPUT_FILE_BYTES)
    invalid('files', `must hold at most ${MAX_INPUT_FILE_BYTES} bytes in all`);
}

const AGENT_FIELDS = {
  mode: 'mode',
  max_steps: 'maxSteps',
  max_step_retries: 'maxStepRetries',
  model: 'model',
  answer_schema: 'answerSchema',
} as const;

export const DEFAULT_MAX_STEPS = 20;
export const DEFAULT_MAX_STEP_RETRIES = 3;

function agentInput(input: SubmitInput, instruction: unknown) {
  if (typeof instruction !== 'string' || instruction.trim().length === 0) {
    invalid('instruction', 'must be a non-empty string');
  }
  const mode = input.mode ?? 'code';
  if (!AGENT_MODES.includes(mode)) invalid('mode', `must be one of ${AGENT_MODES.join(', ')}`);
  const int = (field: string, v: number | undefined, min: number, max: number, fallback: number): number => {
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || v < min || v > max)
      invalid(field, `must be an integer from ${min} to ${max}`);
    return v;
  };
  if (input.model !== undefined && !(typeof input.model === 'string' && MODEL.test(input.model))) {
    invalid('model', 'must be 1-200 letters, digits or _ . : / @ -');
  }
  return {
    instruction,
    mode,
    maxSteps: int('max_steps', input.maxSteps, 1, 100, DEFAULT_MAX_STEPS),
    maxStepRetries: int('max_step_retries', input.maxStepRetries, 0, 10, DEFAULT_MAX_STEP_RETRIES),
    ...(input.model === undefined ? {} : { model: input.model }),
    ...(input.answerSchema === undefined ? {} : { answerSchema: answerSchemaOf(input.answerSchema) }),
  };
}

/** An answer schema is kept with the task and sent with every model request: bounded. */
export const MAX_ANSWER_SCHEMA_BYTES = 64 * 1024;

/** The shape of an answer schema (a JSON object, bounded); whether it compiles is the agent's check. */
function answerSchemaOf(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    invalid('answer_schema', 'must be a JSON Schema object');
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    invalid('answer_schema', 'must be plain JSON');
  }
  if (text === undefined || Buffer.byteLength(text) > MAX_ANSWER_SCHEMA_BYTES) {
    invalid('answer_schema', `must be at most ${MAX_ANSWER_SCHEMA_BYTES} bytes as JSON`);
  }
  return JSON.parse(text) as Record<string, unknown>;
}

/** The caller's trace context, checked (a malformed one is INVALID_ARGUMENT), for the task to keep (ADR 0053). */
function traceContextOfInput(tc: TraceContext | undefined): { traceContext?: TraceContext } {
  if (tc === undefined) return {};
  const checked = parseTraceHeaders(tc.traceparent, tc.tracestate);
  return checked ? { traceContext: checked } : {};
}
