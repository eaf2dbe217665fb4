import type { ChatMessage, ModelRequest, ToolChoice } from '../spec/index.ts';
import { toMistralToolCallId } from './mistral-tool-call-id.ts';
import type { ProviderPreset } from './provider-presets.ts';

/** Builds the chat-completions request body for `model`, applying the provider's quirks. */
export function chatCompletionsBody(
  request: ModelRequest,
  model: string,
  preset: ProviderPreset,
): Record<string, unknown> {
  const mapId = preset.toolCallIds === 'alnum9' ? toMistralToolCallId : (id: string) => id;
  const body: Record<string, unknown> = {
    model,
    messages: request.messages.map((message) => wireMessage(message, mapId)),
    stream: false,
  };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        ...(tool.strict === true && preset.strictTools ? { strict: true } : {}),
      },
    }));
  }
  if (request.toolChoice !== undefined) body.tool_choice = wireToolChoice(request.toolChoice, preset);
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
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
