import { CodecallError } from '../errors/index.ts';
import type { CallbackCheck } from '../api/index.ts';
import type { TaskBody } from './task-schemas.ts';
import { networkAccessFromWire, taskBudgetsFromWire } from '../spec/index.ts';
import { assertJsonValue } from '../codec/index.ts';
import type { SubmitInput } from '../api/index.ts';

/** Checks a callback URL before it is stored (the service's webhook policy). */

/** The runtime's submission from an HTTP task body (snake_case fields, seconds and MiB). */
export function toSubmitInput(
  b: TaskBody,
  options: { tenant: string; checkCallback: CallbackCheck; field?: string },
): SubmitInput {
  const at = (f: string): string => (options.field ? `${options.field}.${f}` : f);
  if ((b.code === undefined) === (b.instruction === undefined)) {
    const which = b.code === undefined ? 'code' : 'instruction';
    throw new CodecallError(
      'BAD_REQUEST',
      which === 'code'
        ? `${at('code')}: a task needs code (exec mode) or an instruction (agent mode)`
        : `${at('instruction')}: send code or an instruction, not both`,
      { details: { field: at(which) } },
    );
  }
  if (b.code !== undefined) {
    for (const f of ['mode', 'max_steps', 'max_step_retries', 'model', 'answer_schema'] as const) {
      if (b[f] !== undefined) {
        throw new CodecallError('BAD_REQUEST', `${at(f)}: applies to instruction tasks only`, {
          details: { field: at(f) },
        });
      }
    }
  }
  // Before anything walks it (the idempotency hash recurses): a deeply nested value is a 400, not a 500.
  if (b.metadata !== undefined) assertJsonValue(b.metadata, at('metadata'));
  if (b.answer_schema !== undefined) assertJsonValue(b.answer_schema, at('answer_schema'));
  const c = b.tool_constraints;
  const limits = {
    ...(c?.timeout_seconds === undefined ? {} : { timeoutMs: c.timeout_seconds * 1000 }),
    ...(c?.cpu_seconds === undefined ? {} : { cpuMs: Math.max(1, Math.round(c.cpu_seconds * 1000)) }),
    ...(c?.max_memory_mb === undefined ? {} : { memoryBytes: Math.round(c.max_memory_mb * 1024 * 1024) }),
  };
  const constraints = {
    ...(c?.allowed_libraries ? { allowedLibraries: c.allowed_libraries } : {}),
    ...(c?.blocked_commands ? { blockedCommands: c.blocked_commands } : {}),
    ...(c?.network_access === undefined ? {} : { networkAccess: networkAccessFromWire(c.network_access) }),
    ...(c?.budgets === undefined ? {} : { budgets: taskBudgetsFromWire(c.budgets) }),
    ...(c?.allow_subprocesses === undefined ? {} : { allowSubprocesses: c.allow_subprocesses }),
  };
  if (b.callback_url !== undefined) options.checkCallback(b.callback_url, at('callback_url'));
  return {
    ...(b.code === undefined ? {} : { code: b.code }),
    ...(b.instruction === undefined ? {} : { instruction: b.instruction }),
    ...(b.mode === undefined ? {} : { mode: b.mode }),
    ...(b.max_steps === undefined ? {} : { maxSteps: b.max_steps }),
    ...(b.max_step_retries === undefined ? {} : { maxStepRetries: b.max_step_retries }),
    ...(b.model === undefined ? {} : { model: b.model }),
    ...(b.answer_schema === undefined ? {} : { answerSchema: b.answer_schema }),
    tenant: options.tenant,
    ...(b.files === undefined
      ? {}
      : { files: b.files.map((f) => ({ name: f.name, data: f.content_base64 })) }),
    ...(b.language ? { language: b.language } : {}),
    ...(b.seed === undefined ? {} : { seed: b.seed }),
    ...(b.tools ? { tools: b.tools } : {}),
    ...(b.metadata ? { metadata: b.metadata } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(Object.keys(constraints).length > 0 ? { constraints } : {}),
    ...(b.session_id === undefined ? {} : { sessionId: b.session_id }),
    ...(b.priority === undefined ? {} : { priority: b.priority }),
    ...(b.max_retries === undefined ? {} : { maxRetries: b.max_retries }),
    ...(b.callback_url === undefined ? {} : { callbackUrl: b.callback_url }),
    ...(b.deadline_seconds === undefined ? {} : { deadlineSeconds: b.deadline_seconds }),
  };
}
