import { decodeValue, toJsonView } from '../codec/index.ts';
import type { AgentMode, ChatMessage, LogEntry, ModelToolCall } from '../spec/index.ts';
import type { AgentStep, StepReply, StepResult } from './agent-journal.ts';
import { RUN_CODE_TOOL } from './prompts.ts';

/** What the model sees of a step's output: enough to go on, never a flood. */
export const MAX_FEEDBACK_CHARS = 8_000;

function clip(text: string, max = MAX_FEEDBACK_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n... (${text.length - max} more characters cut)`;
}

/** The id of the call a code-mode step answers: the model's `run_code` call, or one made up for fenced code. */
export function codeCallId(step: number, reply: StepReply): string {
  return reply.toolCalls.find((c) => c.name === RUN_CODE_TOOL)?.id ?? `call_step${step}`;
}

/**
 * A reply as the conversation holds it. In code mode a fenced program gets a `run_code` call, so that its
 * result can answer as a `tool` message (chat-completions accepts tool messages only for calls).
 */
export function assistantMessage(mode: AgentMode, step: AgentStep): ChatMessage | null {
  const reply = step.reply;
  if (!reply) return null;
  const made: ModelToolCall[] =
    mode === 'code' && step.code !== null && !reply.toolCalls.some((c) => c.name === RUN_CODE_TOOL)
      ? [{ id: codeCallId(step.step, reply), name: RUN_CODE_TOOL, arguments: '{}' }]
      : [];
  const toolCalls = [...reply.toolCalls, ...made];
  return { role: 'assistant', content: reply.content, ...(toolCalls.length > 0 ? { toolCalls } : {}) };
}

function logText(logs: readonly LogEntry[]): string {
  if (logs.length === 0) return '(no output)';
  return clip(logs.map((l) => (l.level === 'log' ? l.message : `[${l.level}] ${l.message}`)).join('\n'));
}

export function valueText(output: string | null): string {
  if (output === null) return 'undefined';
  const value = toJsonView(decodeValue(output));
  return value === undefined ? 'undefined' : clip(JSON.stringify(value, null, 1) ?? 'undefined');
}

/** What a retried step took over and which completed calls it did not make again (ADR 0034). */
function carryText(result: StepResult): string {
  const lines: string[] = [];
  if (result.carried) {
    const n = result.carried;
    const calls = n === 1 ? '1 tool call of the failed step was' : `${n} tool calls of the failed steps were`;
    lines.push(`${calls} not run again (earlier results reused).`);
  }
  const left = result.not_repeated ?? [];
  if (left.length > 0) {
    const shown = left.slice(0, 10).map((c) => `${describe(c.tool, c.args)} (${c.call_id})`);
    const more = left.length > 10 ? ` and ${left.length - 10} more` : '';
    lines.push(`Already executed, not repeated: ${shown.join(', ')}${more}.`);
  }
  return lines.length > 0 ? `\n${lines.join('\n')}` : '';
}

function describe(tool: string, args: string): string {
  let text: string;
  try {
    text = JSON.stringify(toJsonView(decodeValue(args))) ?? 'undefined';
  } catch {
    text = args;
  }
  return `${tool}(${text.length > 200 ? `${text.slice(0, 197)}...` : text})`;
}

function codeFeedback(result: StepResult, retriesLeft: number): string {
  const carried = carryText(result);
  if (result.ok) return `Output:\n${logText(result.logs)}\nValue: ${valueText(result.output)}${carried}`;
  const e = result.error;
  const where = e?.line === undefined ? '' : ` at line ${e.line}`;
  const what = e ? `${e.name} (${e.code})${where}: ${e.message}` : 'the step failed';
  const left =
    retriesLeft > 0
      ? `Fix the code and send it again (${retriesLeft} ${retriesLeft === 1 ? 'try' : 'tries'} left).`
      : 'No tries are left.';
  return `Error: ${what}\nOutput:\n${logText(result.logs)}${carried}\n${left}`;
}

/** The messages that tell the model how its last step went (they open the next request). */
export function feedbackMessages(mode: AgentMode, step: AgentStep, retriesLeft: number): ChatMessage[] {
  const { reply, result } = step;
  if (!reply || !result) return [];
  if (mode === 'function_calling') {
    const calls = result.calls ?? [];
    // A reply without calls that was refused (empty, stopped mid-answer, an answer outside its schema): told as
    // the user's turn, since there is no call to answer.
    if (calls.length === 0 && result.error) return [{ role: 'user', content: clip(result.error.message) }];
    return calls.map((c) => ({ role: 'tool', toolCallId: c.id, content: clip(c.content) }));
  }
  if (step.code === null) {
    return [{ role: 'user', content: result.error?.message ?? 'Your reply had no code and no answer.' }];
  }
  const runId = codeCallId(step.step, reply);
  const others: ChatMessage[] = reply.toolCalls
    .filter((c) => c.id !== runId)
    .map((c) => ({
      role: 'tool',
      toolCallId: c.id,
      content: `Error: ${c.name} cannot be called as a function here; call the tools from your code.`,
    }));
  return [...others, { role: 'tool', toolCallId: runId, content: codeFeedback(result, retriesLeft) }];
}
