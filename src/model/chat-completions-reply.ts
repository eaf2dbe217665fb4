import { CodecallError } from '../errors/index.ts';
import type { ModelReply, ModelToolCall } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';

/** Parses a chat-completions response body; anything that is not one is MODEL_BAD_REPLY. */
export function parseChatCompletionsReply(text: string, requestedModel: string): ModelReply {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw badReply('the model server sent a body that is not JSON', text, error);
  }
  if (!isRecord(body)) throw badReply('the model server sent JSON that is not an object', text);
  const choices = body.choices;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (!isRecord(first) || !isRecord(first.message)) throw badReply('the model reply has no choices', text);
  const message = first.message;
  const rawCalls = message.tool_calls;
  const toolCalls = Array.isArray(rawCalls) ? rawCalls.map((call, i) => parseToolCall(call, i, text)) : [];
  const usage = isRecord(body.usage) ? body.usage : {};
  return {
    content: parseContent(message.content),
    toolCalls,
    finishReason: typeof first.finish_reason === 'string' ? first.finish_reason : 'unknown',
    usage: { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens) },
    model: typeof body.model === 'string' && body.model !== '' ? body.model : requestedModel,
  };
}

// Mistral may send content as a list of chunks; only the text ones matter here.
function parseContent(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.flatMap((chunk) =>
      isRecord(chunk) && typeof chunk.text === 'string' ? [chunk.text] : [],
    );
    return parts.length > 0 ? parts.join('') : null;
  }
  return null;
}

function parseToolCall(call: unknown, index: number, text: string): ModelToolCall {
  const fn = isRecord(call) ? call.function : undefined;
  if (!isRecord(call) || !isRecord(fn) || typeof fn.name !== 'string' || fn.name === '') {
    throw badReply(`tool call ${index} of the model reply has no function name`, text);
  }
  const args = fn.arguments;
  return {
    // Some local servers omit ids; a positional one keeps the tool result matchable.
    id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`,
    name: fn.name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

function badReply(message: string, text: string, cause?: unknown): CodecallError {
  return new CodecallError('MODEL_BAD_REPLY', message, { details: { body: text.slice(0, 500) }, cause });
}

/** The provider's own words from an error body (OpenAI `error.message`, Mistral `message`/`detail`). */
export function providerErrorMessage(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 500);
  }
  if (isRecord(body)) {
    const error = body.error;
    if (isRecord(error) && typeof error.message === 'string') return error.message;
    if (typeof error === 'string') return error;
    if (typeof body.message === 'string') return body.message;
    if (body.detail !== undefined) {
      return typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
    }
  }
  return text.trim().slice(0, 500);
}
