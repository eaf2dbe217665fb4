import type { ModelClient, ModelCallOptions, ModelReply, ModelRequest } from '../spec/index.ts';
import { parseChatCompletionsReply } from './chat-completions-reply.ts';
import { chatCompletionsBody } from './chat-completions-request.ts';
import { createJsonPost, invalidConfig, type ProviderHttpOptions } from './json-post.ts';
import { traceModelRequest } from '../telemetry/index.ts';
import { PROVIDER_PRESETS, isModelProvider, type ModelProvider } from './provider-presets.ts';

export { DEFAULT_MODEL_MAX_RETRIES, DEFAULT_MODEL_TIMEOUT_MS } from './json-post.ts';

export interface OpenAiClientOptions extends ProviderHttpOptions {
  readonly model: string;
  readonly provider?: ModelProvider;
}

/** A ModelClient for any server speaking OpenAI's chat-completions protocol. */
export function createOpenAiClient(options: OpenAiClientOptions): ModelClient {
  const provider = options.provider ?? 'openai';
  if (!isModelProvider(provider)) throw invalidConfig(`unknown model provider "${String(provider)}"`);
  if (options.baseUrl.trim() === '') throw invalidConfig('the model base URL is empty');
  if (options.model.trim() === '') throw invalidConfig('the model name is empty');
  const model = options.model;
  const preset = PROVIDER_PRESETS[provider];
  const post = createJsonPost(options, '/chat/completions');
  const parse = (text: string): ModelReply => parseChatCompletionsReply(text, model);

  // Async, so that a request the body builder refuses is a rejection like any other failure.
  async function complete(request: ModelRequest, callOptions: ModelCallOptions = {}): Promise<ModelReply> {
    const asked = request.model ?? model;
    const body = JSON.stringify(chatCompletionsBody(request, asked, preset));
    return await traceModelRequest({ provider, model: asked, request }, () =>
      post(body, parse, callOptions.signal),
    );
  }

  return { complete };
}
