import { decodeValue, encodeValue, sha256Hex } from '../codec/index.ts';
import { errorRow, failure, isCodecallError } from '../errors/index.ts';
import type { ExecutionResult, InstructionTaskInput, TypeScriptLowering } from '../spec/index.ts';
import type { AgentStep, StepResult } from './agent-journal.ts';
import { checkValueAnswer } from './answer-schema.ts';
import { composeProgram, lineInCurrent } from './compose-program.ts';
import { composePythonProgram } from './compose-python.ts';
import { extractCode } from './extract-code.ts';
import { RUN_CODE_TOOL } from './prompts.ts';
import type { RunJournal } from './step-run.ts';
import { carryReport, stepCarry } from './step-carry.ts';
import type { StepCarryOptions } from './step-carry.ts';

/** What acting on a reply came to: the task's answer, a step result to feed back, or the end of this run. */
export type StepOutcome =
  | { readonly kind: 'answer'; readonly value: unknown }
  | { readonly kind: 'result'; readonly result: StepResult; readonly run?: ExecutionResult }
  | { readonly kind: 'ended'; readonly run: ExecutionResult };

/** The program of a code-mode reply: a `run_code` call's, else its fenced code; null when it is an answer. */
export function replyCode(step: AgentStep, language: InstructionTaskInput['language']): string | null {
  const reply = step.reply;
  if (!reply) return null;
  const call = reply.toolCalls.find((c) => c.name === RUN_CODE_TOOL);
  if (call) {
    try {
      const args = JSON.parse(call.arguments) as { code?: unknown };
      if (typeof args.code === 'string') return args.code;
    } catch {
      // Unparseable arguments: the fenced code (if any) or nothing.
    }
  }
  const found = extractCode(reply.content ?? '', language);
  return found.kind === 'code' ? found.code : null;
}

/**
 * Runs a code-mode step: the step's block after the earlier successful ones (so their names are defined), with
 * their journaled tool outcomes replayed. Journals the block before it runs and the result after.
 */
export async function runCodeStep(
  journal: RunJournal,
  input: InstructionTaskInput,
  step: AgentStep,
  earlier: readonly AgentStep[],
  carryOptions: StepCarryOptions,
  lowering?: TypeScriptLowering,
): Promise<StepOutcome> {
  const reply = step.reply;
  const code = step.code ?? (reply ? replyCode(step, input.language) : null);
  if (code === null) {
    const text = reply?.content?.trim() ?? '';
    if (text.length > 0) return { kind: 'answer', value: text };
    const error = failure('MODEL_BAD_REPLY', 'Your reply was empty. Send code or the answer.');
    return record(journal, { step: step.step, ok: false, final: false, output: null, error, logs: [] });
  }
  if (step.code === null) {
    await journal.append([
      { type: 'code_block', data: { block: step.step, code_hash: sha256Hex(code), code } },
    ]);
  }
  const rerun = earlier.filter((s) => s.result?.ok === true && s.code !== null);
  const python = input.language === 'python';
  let program;
  try {
    program = python
      ? composePythonProgram(
          rerun.map((s) => s.code ?? ''),
          code,
        )
      : composeProgram({
          earlier: rerun.map((s) => s.code ?? ''),
          current: code,
          language: input.language === 'typescript' ? 'typescript' : 'javascript',
          ...(lowering ? { lowering } : {}),
        });
  } catch (e) {
    if (!isCodecallError(e) || e.code !== 'SYNTAX_ERROR') throw e;
    const line = typeof e.details.line === 'number' ? { line: e.details.line } : {};
    const error = { ...failure('SYNTAX_ERROR', e.message), ...line };
    return record(journal, { step: step.step, ok: false, final: false, output: null, error, logs: [] });
  }
  const rerunSteps = new Set(rerun.map((s) => s.step));
  // A retry takes over what the failed steps before it completed (ADR 0034).
  const carry = stepCarry(journal.entries, earlier, carryOptions);
  const lang = python ? 'python' : 'javascript';
  const run = await journal.runStep(step.step, program.code, lang, rerunSteps, carry);
  if (run.status === 'failed' && errorRow(run.error.code)?.endsRun) return { kind: 'ended', run };
  const report = carryReport(journal.entries, step.step, carry);
  if (run.status === 'failed') {
    const line = lineInCurrent(program, run.error.line);
    const { code: errorCode, message } = run.error;
    const error = { code: errorCode, name: run.error.name ?? 'Error', message, ...(line ? { line } : {}) };
    return record(
      journal,
      { step: step.step, ok: false, final: false, output: null, error, logs: run.logs, ...report },
      run,
    );
  }
  const value = run.value as { final?: unknown; value?: unknown } | null;
  const final = value?.final === true;
  const output = encodeValue(value?.value);
  const outside = final ? answerOutsideSchema(input, output) : null;
  if (outside !== null) {
    // Fed back like a text answer outside the schema: the model gets another step (its tool calls are carried).
    const error = failure('MODEL_BAD_REPLY', `final_answer(value): ${outside}`);
    return record(
      journal,
      { step: step.step, ok: false, final: false, output: null, error, logs: run.logs, ...report },
      run,
    );
  }
  return record(
    journal,
    { step: step.step, ok: true, final, output, error: null, logs: run.logs, ...report },
    run,
  );
}

/** Why `final_answer(value)`'s value is outside the task's answer schema, or null (none, or it matches). */
function answerOutsideSchema(input: InstructionTaskInput, output: string): string | null {
  if (input.answerSchema === undefined) return null;
  const checked = checkValueAnswer(input.answerSchema, decodeValue(output));
  return checked.ok ? null : checked.message;
}

export async function record(
  journal: RunJournal,
  result: StepResult,
  run?: ExecutionResult,
): Promise<StepOutcome> {
  await journal.append([{ type: 'step_result', data: { ...result } }]);
  return { kind: 'result', result, ...(run ? { run } : {}) };
}
