import { CodecallError } from '../errors/index.ts';
import { isTerminal } from '../spec/index.ts';
import type { NewTaskAttributes, TaskInput, TaskRecord } from '../spec/index.ts';
import type { ReviseInput, SubmitInput } from '../api/index.ts';
import { toTaskAttributes, toTaskInput } from './submit-input.ts';

/**
 * The task that revises `source` (ADR 0034): the source's submission with `code` replaced, checked by the path
 * every submission takes (`check`: the ceilings; then toTaskInput, toTaskAttributes), so a revision can ask for
 * nothing a submission could not. No deadline: the source's was relative to its own start.
 */
export function revisionOf(
  source: TaskRecord,
  revise: ReviseInput,
  check: (input: SubmitInput) => void,
): { input: TaskInput; attributes: NewTaskAttributes } {
  const from = source.input;
  if (from.kind !== 'code') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `task ${source.id} is an instruction (agent) task: its agent revises its own steps; only code tasks are revised`,
      { details: { task_id: source.id, field: 'task_id' } },
    );
  }
  if (!isTerminal(source.status)) {
    throw new CodecallError(
      'ILLEGAL_TRANSITION',
      `task ${source.id} is ${source.status}: only a task that has ended is revised (cancel it first)`,
      { details: { task_id: source.id, status: source.status, pause_reason: source.pauseReason } },
    );
  }
  if (revise.rerunReads !== undefined && typeof revise.rerunReads !== 'boolean') {
    throw new CodecallError('INVALID_ARGUMENT', 'rerun_reads must be a boolean', {
      details: { field: 'rerun_reads' },
    });
  }
  const submission: SubmitInput = {
    code: revise.code,
    language: from.language,
    seed: from.seed,
    ...(from.limits ? { limits: from.limits } : {}),
    ...(from.tools ? { tools: from.tools } : {}),
    ...(from.metadata || revise.metadata ? { metadata: { ...from.metadata, ...revise.metadata } } : {}),
    ...(from.constraints ? { constraints: from.constraints } : {}),
    ...(from.files ? { files: from.files } : {}),
    tenant: source.tenant,
    ...(source.sessionId === null ? {} : { sessionId: source.sessionId }),
    priority: source.priority,
    ...(source.callbackUrl === null ? {} : { callbackUrl: source.callbackUrl }),
    maxRetries: source.maxRetries,
    ...(revise.traceContext ? { traceContext: revise.traceContext } : {}),
  };
  check(submission);
  const input = toTaskInput(submission);
  if (input.kind !== 'code') throw new Error('a revision is a code task');
  return {
    input: { ...input, revisionOf: source.id, ...(revise.rerunReads === true ? { rerunReads: true } : {}) },
    attributes: toTaskAttributes(submission),
  };
}
