import { sha256Hex, toJsonView } from '../codec/index.ts';
import { errorRow, failure } from '../errors/index.ts';
import type { ExecutionResult, LogEntry, ModelToolCall } from '../spec/index.ts';
import type { AgentStep, CallResult } from './agent-journal.ts';
import { record } from './code-step.ts';
import type { StepOutcome } from './code-step.ts';
import { parseToolArguments } from './parse-tool-arguments.ts';
import type { RunJournal } from './step-run.ts';
import { fromStrictArguments } from './tool-specs.ts';
import type { FunctionTool } from './tool-specs.ts';

interface Runnable {
  readonly call: ModelToolCall;
  readonly tool: FunctionTool;
  readonly args: Record<string, unknown>;
}

/**
 * The program that runs a reply's function calls at once (`Promise.allSettled`), so they go through the same
 * sandbox bridge and journal as code: approvals, pauses, replay and the concurrency bound all apply.
 */
export function callsProgram(calls: readonly Runnable[]): string {
  const lines = calls.map(
    ({ tool, args }) =>
      `  () => globalThis[${JSON.stringify(tool.tool.namespace)}][${JSON.stringify(tool.tool.name)}](${JSON.stringify(args)}),`,
  );
  return [
    'const calls = [',
    ...lines,
    '];',
    'const settled = await Promise.allSettled(calls.map((call) => call()));',
    'return settled.map((s) => s.status === "fulfilled"',
    '  ? { ok: true, value: s.value }',
    '  : { ok: false, code: String(s.reason?.code ?? "GUEST_ERROR"), message: String(s.reason?.message ?? s.reason) });',
  ].join('\n');
}

function errorContent(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** Runs a function-calling step: every valid call of the reply at once; invalid ones answer with their error. */
export async function runFunctionCallStep(
  journal: RunJournal,
  step: AgentStep,
  tools: ReadonlyMap<string, FunctionTool>,
): Promise<StepOutcome> {
  const reply = step.reply;
  if (reply?.violation !== undefined && reply.violation.toolCall === undefined) {
    // A structured answer stopped mid-value (ADR 0057): the model is told where, and asked again.
    const error = failure('GRAMMAR_REJECTED', reply.violation.message);
    return record(journal, { step: step.step, ok: false, final: false, output: null, error, logs: [] });
  }
  if (!reply || reply.toolCalls.length === 0) {
    const text = reply?.content?.trim() ?? '';
    if (text.length > 0) return { kind: 'answer', value: text };
    const error = failure('MODEL_BAD_REPLY', 'Your reply was empty. Call a function or answer.');
    return record(journal, { step: step.step, ok: false, final: false, output: null, error, logs: [] });
  }
  const results = new Map<string, CallResult>();
  const runnable: Runnable[] = [];
  for (const call of reply.toolCalls) {
    const tool = tools.get(call.name);
    if (!tool) {
      const names = [...tools.keys()].join(', ');
      const content = errorContent(
        'NO_SUCH_TOOL',
        `there is no function ${call.name}; the functions are: ${names}`,
      );
      results.set(call.id, { id: call.id, name: call.name, ok: false, content });
      continue;
    }
    if (reply.violation?.toolCall !== undefined && reply.toolCalls[reply.violation.toolCall] === call) {
      // Stopped mid-value by the streamed validation (ADR 0057): what is there is not a call to run or repair.
      const { code, message } = reply.violation;
      results.set(call.id, { id: call.id, name: call.name, ok: false, content: errorContent(code, message) });
      continue;
    }
    const parsed = parseToolArguments(call.arguments);
    if (parsed.ok && parsed.repaired && reply.finishReason === 'length') {
      // A repair would complete what the token limit cut off: a guess, not a fix.
      const message = 'the reply was cut off at the token limit inside these arguments; send the call again';
      results.set(call.id, {
        id: call.id,
        name: call.name,
        ok: false,
        content: errorContent('TOOL_VALIDATION', message),
      });
      continue;
    }
    if (!parsed.ok) {
      results.set(call.id, {
        id: call.id,
        name: call.name,
        ok: false,
        content: errorContent(parsed.code, parsed.message),
      });
      continue;
    }
    const args = tool.spec.strict ? fromStrictArguments(tool.tool.inputSchema, parsed.args) : parsed.args;
    runnable.push({ call, tool, args });
  }
  let logs: readonly LogEntry[] = [];
  let run: ExecutionResult | undefined;
  if (runnable.length > 0) {
    const code = step.code ?? callsProgram(runnable);
    if (step.code === null) {
      await journal.append([
        { type: 'code_block', data: { block: step.step, code_hash: sha256Hex(code), code } },
      ]);
    }
    run = await journal.runStep(step.step, code, 'javascript', new Set());
    if (run.status === 'failed' && errorRow(run.error.code)?.endsRun) return { kind: 'ended', run };
    logs = run.logs;
    const settled = run.status === 'succeeded' && Array.isArray(run.value) ? (run.value as unknown[]) : null;
    runnable.forEach(({ call }, i) => {
      const s = settled?.[i] as
        { ok?: unknown; value?: unknown; code?: unknown; message?: unknown } | undefined;
      const content =
        s?.ok === true
          ? (JSON.stringify(toJsonView(s.value)) ?? 'null')
          : s
            ? errorContent(String(s.code), String(s.message))
            : errorContent(
                run?.status === 'failed' ? run.error.code : 'GUEST_ERROR',
                run?.status === 'failed' ? run.error.message : 'the call gave no result',
              );
      results.set(call.id, { id: call.id, name: call.name, ok: s?.ok === true, content });
    });
  }
  const calls = reply.toolCalls.map((c) => results.get(c.id) as CallResult);
  const ok = calls.every((c) => c.ok);
  // The step's summary, not one tool's error: named Error as the step's other failures are.
  const error = ok
    ? null
    : {
        ...failure('TOOL_ERROR', `${calls.filter((c) => !c.ok).length} of ${calls.length} calls failed`),
        name: 'Error',
      };
  return record(journal, { step: step.step, ok, final: false, output: null, error, logs, calls }, run);
}
