import type { ChatMessage, ModelRequest, ToolChoice } from '../spec/index.ts';
import { responseConstraintFields, wireTool } from './constraint-forms.ts';
import type { WarningSink } from './constraint-forms.ts';
import { toMistralToolCallId } from './mistral-tool-call-id.ts';
import type { ProviderPreset, ResponseConstraint } from './provider-presets.ts';

export interface BodyOptions {
  /** The form of a `responseFormat`; the preset's when not given. */
  readonly responseConstraint?: ResponseConstraint;
  /** Ask for a streamed reply (server-sent events), to validate it as it comes (ADR 0057). */
  readonly stream?: boolean;
  readonly warn?: WarningSink;
}

/** Builds the chat-completions request body for `model`, applying the provider's quirks. */
export function chatCompletionsBody(
  request: ModelRequest,
  model: string,
  preset: ProviderPreset,
  options: BodyOptions = {},
): Record<string, unknown> {
  const warn = options.warn ?? (() => undefined);
  const mapId = preset.toolCallIds === 'alnum9' ? toMistralToolCallId : (id: string) => id;
  const body: Record<string, unknown> = {
    model,
    messages: request.messages.map((message) => wireMessage(message, mapId)),
    stream: options.stream === true,
  };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => wireTool(tool, preset, warn));
  }
  if (request.toolChoice !== undefined) body.tool_choice = wireToolChoice(request.toolChoice, preset);
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.responseFormat !== undefined) {
    const form = options.responseConstraint ?? preset.responseConstraint;
    Object.assign(body, responseConstraintFields(request.responseFormat, form, preset, warn));
  }
  return body;
}

function wireMessage(message: ChatMessage, mapId: (id: string) => string): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: mapId(message.toolCallId), content: message.content };
    case 'assistant': {
      const out: Record<string, unknown> = { role: 'assistant', content: message.content };
      if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
        out.tool_calls = message.toolCalls.map((call) => ({
          id: mapId(call.id),
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        }));
      }
      return out;
    }
  }
}

function wireToolChoice(choice: ToolChoice, preset: ProviderPreset): unknown {
  if (choice === 'required') return preset.requiredToolChoice;
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
