/**
 * A streamed chat-completions reply (`stream: true`, server-sent events) read chunk by chunk, each tool call's
 * arguments and a structured answer's text validated as they arrive (ADR 0057): at the first byte that cannot lead
 * to a value of its schema the request is aborted and the reply ends there, with a `violation` saying where and
 * what was expected.
 */
import { CodecallError } from '../errors/index.ts';
import type { ModelReply, ModelRequest, ModelToolCall, ReplyViolation } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';
import { parseChatCompletionsReply } from './chat-completions-reply.ts';
import { ReplyValidator, refusalMessage } from './reply-validator.ts';
import type { ValueRefusal } from './reply-validator.ts';

/** Longest event line we hold (a hostile server must not grow our buffer without end). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Most text one reply may bring in all (content and arguments together). */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

interface CallDraft {
  id: string;
  name: string;
  arguments: string;
  validator: ReplyValidator | null;
}

const encoder = new TextEncoder();

/** What the validators check: each tool's parameters by name, and the answer's schema. */
class ReplyDraft {
  content = '';
  readonly calls: CallDraft[] = [];
  finishReason = 'unknown';
  model: string;
  usage = { promptTokens: 0, completionTokens: 0 };
  violation: ReplyViolation | null = null;
  bytes = 0;
  readonly #content: ReplyValidator | null;

  constructor(
    private readonly request: ModelRequest,
    requestedModel: string,
  ) {
    this.model = requestedModel;
    // The text is held to the answer's schema only when it cannot be a word said before tool calls.
    const answerOnly = (request.tools?.length ?? 0) === 0 || request.toolChoice === 'none';
    this.#content =
      request.responseFormat === undefined || !answerOnly
        ? null
        : new ReplyValidator(request.responseFormat.schema);
  }

  addContent(text: string): void {
    if (text === '') return;
    this.content += text;
    this.#check(this.#content?.push(encoder.encode(text)) ?? null, undefined);
  }

  addCall(index: number, id: unknown, name: unknown, args: unknown): void {
    let call = this.calls[index];
    if (call === undefined) {
      for (let i = this.calls.length; i <= index; i++) {
        this.calls[i] = { id: `call_${i}`, name: '', arguments: '', validator: null };
      }
      call = this.calls[index]!;
    }
    if (typeof id === 'string' && id !== '') call.id = id;
    if (typeof name === 'string' && name !== '') {
      call.name += name;
      const spec = this.request.tools?.find((tool) => tool.name === call.name);
      call.validator = spec === undefined ? null : new ReplyValidator(spec.parameters);
      // Arguments may come before the name's last piece on some servers: check what is there.
      if (call.arguments !== '')
        this.#check(call.validator?.push(encoder.encode(call.arguments)) ?? null, index);
    }
    const piece =
      typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args);
    if (piece === '') return;
    call.arguments += piece;
    this.#check(call.validator?.push(encoder.encode(piece)) ?? null, index);
  }

  /** At the end of the stream: a value left unfinished is refused too. */
  end(): void {
    if (this.violation !== null) return;
    this.calls.forEach((call, index) => this.#check(call.validator?.end() ?? null, index));
    if (this.calls.length === 0 && this.content.trim() !== '')
      this.#check(this.#content?.end() ?? null, undefined);
  }

  #check(refusal: ValueRefusal | null, toolCall: number | undefined): void {
    if (refusal === null || this.violation !== null) return;
    const what =
      toolCall === undefined ? 'the answer' : `the arguments of ${this.calls[toolCall]?.name ?? 'the call'}`;
    this.violation = {
      code: 'GRAMMAR_REJECTED',
      message: refusalMessage(refusal, what),
      ...(toolCall === undefined ? {} : { toolCall }),
      position: refusal.position,
      expected: refusal.expected,
    };
  }

  reply(): ModelReply {
    const toolCalls: ModelToolCall[] = this.calls
      .filter((call) => call.name !== '')
      .map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
    return {
      content: this.content === '' ? null : this.content,
      toolCalls,
      finishReason: this.violation === null ? this.finishReason : 'grammar_rejected',
      usage: this.usage,
      model: this.model,
      ...(this.violation === null ? {} : { violation: this.violation }),
    };
  }
}

/** Applies one event's JSON to the draft. */
function applyChunk(draft: ReplyDraft, chunk: unknown): void {
  if (!isRecord(chunk)) return;
  if (typeof chunk.model === 'string' && chunk.model !== '') draft.model = chunk.model;
  if (isRecord(chunk.usage)) {
    const u = chunk.usage;
    draft.usage = {
      promptTokens: typeof u.prompt_tokens === 'number' ? u.prompt_tokens : 0,
      completionTokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : 0,
    };
  }
  const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  if (!isRecord(choice)) return;
  if (typeof choice.finish_reason === 'string') draft.finishReason = choice.finish_reason;
  const delta = choice.delta;
  if (!isRecord(delta)) return;
  if (typeof delta.content === 'string') draft.addContent(delta.content);
  else if (Array.isArray(delta.content)) {
    for (const part of delta.content)
      if (isRecord(part) && typeof part.text === 'string') draft.addContent(part.text);
  }
  if (Array.isArray(delta.tool_calls)) {
    delta.tool_calls.forEach((call: unknown, position: number) => {
      if (!isRecord(call)) return;
      const index =
        typeof call.index === 'number' && Number.isInteger(call.index) && call.index >= 0
          ? call.index
          : position;
      if (index > 1000) return;
      const fn = isRecord(call.function) ? call.function : {};
      draft.addCall(index, call.id, fn.name, fn.arguments);
    });
  }
}

/**
 * Reads a streamed reply, validating as it comes; `stop` aborts the request (the server sees the connection
 * close) at the first refused byte. A server that answered with one JSON body instead is read as one, and its
 * values validated the same way (only not early).
 */
export async function readChatCompletionsStream(
  response: Response,
  request: ModelRequest,
  requestedModel: string,
  stop: () => void,
): Promise<ModelReply> {
  const draft = new ReplyDraft(request, requestedModel);
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const whole = parseChatCompletionsReply(await response.text(), requestedModel);
    if (whole.content !== null && whole.toolCalls.length === 0) draft.addContent(whole.content);
    whole.toolCalls.forEach((call, i) => draft.addCall(i, call.id, call.name, call.arguments));
    draft.end();
    draft.finishReason = whole.finishReason;
    draft.usage = { ...whole.usage };
    draft.model = whole.model;
    return draft.reply();
  }
  const body = response.body;
  if (body === null) throw badStream('the model server sent an empty stream');
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  try {
    while (!done && draft.violation === null) {
      const read = await reader.read();
      if (read.done) break;
      draft.bytes += read.value.byteLength;
      if (draft.bytes > MAX_REPLY_BYTES)
        throw badStream(`the streamed reply passed ${MAX_REPLY_BYTES} bytes`);
      buffer += decoder.decode(read.value, { stream: true });
      let newline: number;
      while (draft.violation === null && (newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') {
          done = true;
          break;
        }
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch (error) {
          throw badStream('the model server sent an event that is not JSON', error, data);
        }
        if (isRecord(chunk) && isRecord(chunk.error)) {
          throw badStream(`the model server sent an error in the stream: ${String(chunk.error.message)}`);
        }
        applyChunk(draft, chunk);
      }
      if (buffer.length > MAX_LINE_BYTES) throw badStream(`an event line passed ${MAX_LINE_BYTES} bytes`);
    }
  } finally {
    if (draft.violation !== null) {
      // Stop the model at once: the request is aborted, not read to its end.
      stop();
    }
    reader.cancel().catch(() => undefined);
  }
  if (draft.violation === null) draft.end();
  return draft.reply();
}

function badStream(message: string, cause?: unknown, data?: string): CodecallError {
  return new CodecallError('MODEL_BAD_REPLY', message, {
    cause,
    details: data === undefined ? {} : { event: data.slice(0, 500) },
  });
}
