import { decodeValue } from '../codec/index.ts';
import { traceAgentStep } from '../telemetry/index.ts';
import { CodecallError, failure, isCodecallError } from '../errors/index.ts';
import { noModelConfiguredError } from '../model/index.ts';
import { tighterBudget } from '../spec/index.ts';
import type {
  AgentRunContext,
  ChatMessage,
  ExecutionResult,
  InstructionTaskInput,
  LogEntry,
  ModelClient,
  TaskAgent,
  ToolBudget,
  ToolDefinition,
  TypeScriptLowering,
} from '../spec/index.ts';
import { readAgentSteps } from './agent-journal.ts';
import type { AgentStep, StepError } from './agent-journal.ts';
import { answerFormat, checkAnswerSchema, checkTextAnswer, checkValueAnswer } from './answer-schema.ts';
import { record, runCodeStep } from './code-step.ts';
import type { StepOutcome } from './code-step.ts';
import { assistantMessage, feedbackMessages } from './feedback.ts';
import { runFunctionCallStep } from './function-call-step.ts';
import { RUN_CODE_SPEC, systemPrompt } from './prompts.ts';
import { RunJournal } from './step-run.ts';
import { functionTools } from './tool-specs.ts';
import { withTenantLimits } from './tenant-limit-lines.ts';
import type { FunctionTool } from './tool-specs.ts';

export interface AgentOptions {
  /** Null: instruction tasks fail at once with MODEL_NOT_CONFIGURED, saying how to configure one. */
  readonly model: ModelClient | null;
  /** Every tool the runner serves; a task sees those its `tools` list allows. */
  readonly tools: readonly ToolDefinition[];
  /**
   * The prompt lists the tools the runner says the task's programs can call (`AgentRunContext.tools`: the set of
   * the task's manifest, ADR 0047) instead of `tools`: for a runner whose tools change (an MCP server's list).
   */
  readonly followRunnerTools?: boolean;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Sends function-calling tools as `strict` schemas where they can be (OpenAI structured outputs). */
  readonly strictTools?: boolean;
  /**
   * A retried step runs its `read` and `idempotent` calls again instead of taking over the failed steps' results
   * (ADR 0034); `keyed` and `unsafe` ones are taken over either way.
   */
  readonly rerunReads?: boolean;
  /**
   * The TypeScript compiler for code-mode blocks with a namespace or decorators (the sandbox's
   * `typeScriptLowering`); without it every TypeScript block is type-stripped by sucrase, which drops a namespace.
   */
  readonly lowering?: TypeScriptLowering;
}

/** The agent loop: ask the model, journal the reply, act on it, feed the outcome back, until an answer. */
export function createAgent(options: AgentOptions): TaskAgent {
  return { run: (ctx) => runAgent(options, ctx), checkAnswerSchema };
}

interface Tally {
  readonly started: number;
  readonly runs: ExecutionResult[];
}

async function runAgent(options: AgentOptions, ctx: AgentRunContext): Promise<ExecutionResult> {
  const tally: Tally = { started: performance.now(), runs: [] };
  const journal = new RunJournal(ctx);
  const end = (outcome: { value: unknown } | { error: StepError | CodecallError }) =>
    ended(journal.entries, tally, outcome);
  const model = options.model;
  if (!model) return end({ error: noModelConfiguredError() });
  const input = ctx.task.input;
  const allowed = input.tools ? new Set(input.tools) : null;
  const budgets = input.constraints?.budgets?.tools;
  // Each with its budget in this task (the smaller of its own and the task's) and its tenant's limits (ADR 0045),
  // which the prompt says.
  // The task's own tool set (its manifest's, when a server's list changed since it began), or the agent's.
  const tools = ((options.followRunnerTools === true ? ctx.tools : undefined) ?? options.tools)
    .filter((t) => !allowed || allowed.has(`${t.namespace}.${t.name}`))
    .map((t) => withBudget(t, budgets?.[`${t.namespace}.${t.name}`]))
    .map((t) => withTenantLimits(t, ctx.limitsOf));
  const fns =
    input.mode === 'function_calling' ? functionTools(tools, { strict: options.strictTools === true }) : [];
  const byName = new Map<string, FunctionTool>(fns.map((f) => [f.spec.name, f]));
  const effects = new Map(tools.map((t) => [`${t.namespace}.${t.name}`, t.effect]));
  const carry = { effectOf: (tool: string) => effects.get(tool), rerunReads: options.rerunReads === true };
  // One step (ask the model, run what it wrote) per span; null: go on with the next.
  const oneStep = async (setStep: (n: number) => void): Promise<ExecutionResult | null> => {
    const steps = readAgentSteps(journal.entries);
    const last = steps.at(-1);
    let step: AgentStep;
    if (last?.reply && !last.result) {
      // A reply journaled before a crash or pause is acted on, never asked for again.
      step = last;
    } else {
      const stop = stopReason(input, steps);
      if (stop) return end(stop);
      const asked = await ask(model, options, ctx, journal, input, steps, fns, tools);
      if ('error' in asked) return asked.error;
      step = asked.step;
    }
    setStep(step.step);
    const earlier = steps.filter((s) => s.step < step.step);
    const outcome: StepOutcome =
      input.mode === 'code'
        ? await runCodeStep(journal, input, step, earlier, carry, options.lowering)
        : await runFunctionCallStep(journal, step, byName);
    if ('run' in outcome && outcome.run) tally.runs.push(outcome.run);
    if (outcome.kind === 'answer') {
      const schema = input.answerSchema;
      if (schema === undefined) return end({ value: outcome.value });
      // A structured answer (issue 23): the text parsed, held to the schema, or fed back as a failed step.
      const checked = checkTextAnswer(schema, String(outcome.value));
      if (checked.ok) return end({ value: checked.value });
      const error = failure('MODEL_BAD_REPLY', checked.message);
      await record(journal, { step: step.step, ok: false, final: false, output: null, error, logs: [] });
      return null;
    }
    if (outcome.kind === 'ended') return { ...outcome.run, ...totals(journal.entries, tally) };
    if (outcome.result.final) return end(finalAnswer(input, decodeOutput(outcome.result.output)));
    return null;
  };
  for (;;) {
    const done = await traceAgentStep(oneStep);
    if (done) return done;
  }
}

/** The tool with its budget in the task: the smaller of its own and the task's (ADR 0044). */
function withBudget(tool: ToolDefinition, task: ToolBudget | undefined): ToolDefinition {
  if (task === undefined) return tool;
  const budget = tighterBudget(tool.budget, task);
  return budget === undefined ? tool : { ...tool, budget };
}

/**
 * A journaled final step's value as the task's answer. A code step's value outside the answer schema is journaled
 * as a failed step (fed back); a final step outside it comes only from a journal written before that, and fails.
 */
function finalAnswer(
  input: InstructionTaskInput,
  value: unknown,
): { value: unknown } | { error: CodecallError } {
  if (input.answerSchema === undefined) return { value };
  const checked = checkValueAnswer(input.answerSchema, value);
  if (checked.ok) return { value };
  return { error: new CodecallError('MODEL_BAD_REPLY', `final_answer(value): ${checked.message}`) };
}

function decodeOutput(output: string | null): unknown {
  return output === null ? undefined : decodeValue(output);
}

function failedInARow(steps: readonly AgentStep[]): number {
  let n = 0;
  for (let i = steps.length - 1; i >= 0 && steps[i]?.result?.ok === false; i--) n++;
  return n;
}

/** Why the loop ends before asking again: a final answer already journaled, too many failures, or steps. */
function stopReason(
  input: InstructionTaskInput,
  steps: readonly AgentStep[],
): { value: unknown } | { error: StepError | CodecallError } | null {
  const last = steps.at(-1);
  if (last?.result?.final) return finalAnswer(input, decodeOutput(last.result.output));
  const failed = failedInARow(steps);
  if (last?.result?.error && failed > input.maxStepRetries) {
    const e = last.result.error;
    const message = `step ${last.step} failed (${failed} failed steps in a row, retries: ${input.maxStepRetries}): ${e.message}`;
    return { error: { ...e, message } };
  }
  const asked = steps.filter((s) => s.reply !== null).length;
  if (asked >= input.maxSteps && last?.result) {
    return {
      error: new CodecallError(
        'MAX_STEPS_EXCEEDED',
        `the model gave no answer within max_steps (${input.maxSteps}); raise max_steps or simplify the task`,
      ),
    };
  }
  return null;
}

/** Journals the request (once), asks the model, journals the reply before anything acts on it. */
async function ask(
  model: ModelClient,
  options: AgentOptions,
  ctx: AgentRunContext,
  journal: RunJournal,
  input: InstructionTaskInput,
  steps: readonly AgentStep[],
  fns: readonly FunctionTool[],
  tools: readonly ToolDefinition[],
): Promise<{ step: AgentStep } | { error: ExecutionResult }> {
  const last = steps.at(-1);
  const pending = last && !last.reply ? last : null;
  const number = pending ? pending.step : (last?.step ?? 0) + 1;
  let sent = pending?.sent ?? [];
  if (!pending) {
    sent = last
      ? feedbackMessages(input.mode, last, input.maxStepRetries + 1 - failedInARow(steps))
      : [
          {
            role: 'system',
            content: systemPrompt(
              input.mode,
              tools,
              input.language,
              input.constraints?.networkAccess ?? false,
            ),
          },
          { role: 'user', content: input.instruction },
        ];
    await journal.append([{ type: 'model_request', data: { step: number, messages: sent } }]);
  }
  const messages: ChatMessage[] = [];
  for (const s of steps) {
    if (s === pending) continue;
    messages.push(...s.sent);
    const reply = assistantMessage(input.mode, s);
    if (reply) messages.push(reply);
  }
  messages.push(...sent);
  let reply;
  try {
    reply = await model.complete(
      {
        messages,
        tools: input.mode === 'code' ? [RUN_CODE_SPEC] : fns.map((f) => f.spec),
        toolChoice: 'auto',
        ...(input.answerSchema === undefined ? {} : { responseFormat: answerFormat(input.answerSchema) }),
        ...(input.model === undefined ? {} : { model: input.model }),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      },
      { signal: ctx.signal },
    );
  } catch (e) {
    // A pause or cancel while waiting for the model: the request is asked again on resume (it changed nothing).
    const reason: unknown = ctx.signal.aborted ? ctx.signal.reason : e;
    const error = isCodecallError(reason) ? reason : new CodecallError('MODEL_UNAVAILABLE', String(reason));
    return {
      error: {
        status: 'failed',
        error: error.toJSON(),
        ...totals(journal.entries, { started: 0, runs: [] }),
      },
    };
  }
  const data = {
    step: number,
    content: reply.content,
    tool_calls: reply.toolCalls,
    finish_reason: reply.finishReason,
    usage: reply.usage,
    model: reply.model,
    ...(reply.violation === undefined ? {} : { violation: reply.violation }),
  };
  await journal.append([{ type: 'model_reply', data }]);
  return {
    step: {
      step: number,
      sent,
      reply: {
        content: reply.content,
        toolCalls: reply.toolCalls,
        finishReason: reply.finishReason,
        ...(reply.violation === undefined ? {} : { violation: reply.violation }),
      },
      code: null,
      result: null,
    },
  };
}

/** The run's log (every step's, in order) and resources. */
function totals(entries: readonly { type: string; data: Readonly<Record<string, unknown>> }[], tally: Tally) {
  const logs: LogEntry[] = [];
  let toolCalls = 0;
  for (const e of entries) {
    if (e.type === 'step_result' && Array.isArray(e.data.logs)) logs.push(...(e.data.logs as LogEntry[]));
    if (e.type === 'tool_outcome') toolCalls++;
  }
  const r = tally.runs.map((run) => run.resources);
  return {
    logs,
    resources: {
      wallMs: tally.started === 0 ? 0 : performance.now() - tally.started,
      cpuMs: r.reduce((sum, x) => sum + (x.cpuMs ?? 0), 0),
      memoryBytes: r.reduce((max, x) => Math.max(max, x.memoryBytes), 0),
      toolCalls,
    },
  };
}

function ended(
  entries: readonly { type: string; data: Readonly<Record<string, unknown>> }[],
  tally: Tally,
  outcome: { value: unknown } | { error: StepError | CodecallError },
): ExecutionResult {
  // The files of the last step's run: each step re-runs the earlier ones, so it holds what they wrote too.
  const artifacts = tally.runs.at(-1)?.artifacts;
  const t = { ...totals(entries, tally), ...(artifacts ? { artifacts } : {}) };
  if ('value' in outcome) return { status: 'succeeded', value: outcome.value, ...t };
  const e = outcome.error;
  const error =
    e instanceof CodecallError
      ? e.toJSON()
      : { code: e.code, name: e.name, message: e.message, ...(e.line ? { line: e.line } : {}) };
  return { status: 'failed', error, ...t };
}
