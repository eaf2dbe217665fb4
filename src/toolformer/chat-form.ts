import { CodecallError } from '../errors/index.ts';

/** A kept sample: the text around the call, the call and its result. */
export interface ToolformerSample {
  /** The text before the call. */
  readonly prefix: string;
  /** The text after it (whose loss decided the sample). */
  readonly continuation: string;
  readonly tool: string;
  /** The call's input as the inline form writes it. */
  readonly input: string;
  /** The call's arguments as the tool takes them (JSON); `{ input }` when not given. */
  readonly arguments?: Readonly<Record<string, unknown>>;
  /** The tool's result as text, as inserted into the inline form and sent as the tool message. */
  readonly result: string;
}

/** A tool as the chat form's `tools` list declares it (OpenAI's function tool). */
export interface ChatFormTool {
  readonly name: string;
  readonly description?: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface ChatFormOptions {
  /** A system message first, when given. */
  readonly system?: string;
  /** The assistant's tool call id (default `call_1`). */
  readonly toolCallId?: string;
  /** Declared in the record's `tools`, as OpenAI's fine-tuning format takes them. */
  readonly tools?: readonly ChatFormTool[];
}

/** One line of OpenAI's chat fine-tuning JSONL. */
export interface ChatFormRecord {
  readonly messages: readonly Record<string, unknown>[];
  readonly tools?: readonly Record<string, unknown>[];
}

/**
 * The sample as a chat fine-tuning example (OpenAI's JSONL chat format with function calls): the text before as
 * the user's turn, the assistant's tool call, the tool's message with the result, and the continuation as the
 * assistant's answer. So a chat model learns the same thing the inline form teaches: when this text calls for the
 * tool, and how the result is used.
 */
export function chatFormRecord(sample: ToolformerSample, options: ChatFormOptions = {}): ChatFormRecord {
  const id = options.toolCallId ?? 'call_1';
  if (sample.tool === '') throw new CodecallError('INVALID_ARGUMENT', 'the sample has no tool name');
  const args = sample.arguments ?? { input: sample.input };
  const messages: Record<string, unknown>[] = [];
  if (options.system !== undefined) messages.push({ role: 'system', content: options.system });
  messages.push(
    { role: 'user', content: sample.prefix },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id, type: 'function', function: { name: sample.tool, arguments: JSON.stringify(args) } },
      ],
    },
    { role: 'tool', tool_call_id: id, content: sample.result },
    { role: 'assistant', content: sample.continuation },
  );
  if (options.tools === undefined) return { messages };
  const tools = options.tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.parameters,
    },
  }));
  return { messages, tools };
}

/** The sample as one JSONL line of the chat form (no newline inside: JSON.stringify escapes them). */
export function chatFormLine(sample: ToolformerSample, options: ChatFormOptions = {}): string {
  return JSON.stringify(chatFormRecord(sample, options));
}
