import type { ModelClient, ModelCallOptions, ModelReply, ModelRequest } from '../spec/index.ts';
import { parseChatCompletionsReply } from './chat-completions-reply.ts';
import { chatCompletionsBody } from './chat-completions-request.ts';
import { readChatCompletionsStream } from './chat-completions-stream.ts';
import type { WarningSink } from './constraint-forms.ts';
import { createJsonPost, invalidConfig, type ProviderHttpOptions } from './json-post.ts';
import { traceModelRequest } from '../telemetry/index.ts';
import {
  PROVIDER_PRESETS,
  isModelProvider,
  type ModelProvider,
  type ResponseConstraint,
} from './provider-presets.ts';

export { DEFAULT_MODEL_MAX_RETRIES, DEFAULT_MODEL_TIMEOUT_MS } from './json-post.ts';

export interface OpenAiClientOptions extends ProviderHttpOptions {
  readonly model: string;
  readonly provider?: ModelProvider;
  /**
   * How a request's `responseFormat` goes on the wire; the preset's form when not given (ADR 0057). E.g.
   * `guided_json` for a vLLM older than 0.10, `grammar` for llama.cpp to get our GBNF instead of its own.
   */
  readonly responseConstraint?: ResponseConstraint;
  /**
   * Stream replies that carry a schema (tool calls' arguments, a structured answer) and validate them as they
   * come, stopping at the first byte that cannot lead to a valid value (ADR 0057). For servers that do not
   * constrain (or a preset form of `none`); default false.
   */
  readonly streamValidation?: boolean;
  /** Told when the client sends something other than asked (a strict schema sent non-strict); default: a process warning. */
  readonly onWarning?: WarningSink;
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
  const warn: WarningSink =
    options.onWarning ?? ((w) => process.emitWarning(w.message, { code: `CODECALL_${w.code}` }));
  const bodyOptions = {
    warn,
    ...(options.responseConstraint === undefined ? {} : { responseConstraint: options.responseConstraint }),
  };

  // Async, so that a request the body builder refuses is a rejection like any other failure.
  async function complete(request: ModelRequest, callOptions: ModelCallOptions = {}): Promise<ModelReply> {
    const name = request.model ?? model;
    const parse = (text: string): ModelReply => parseChatCompletionsReply(text, name);
    const stream =
      options.streamValidation === true &&
      ((request.tools?.length ?? 0) > 0 || request.responseFormat !== undefined);
    const body = JSON.stringify(chatCompletionsBody(request, name, preset, { ...bodyOptions, stream }));
    return await traceModelRequest({ provider, model: name, request }, () =>
      stream
        ? post(body, parse, callOptions.signal, (response, stop) =>
            readChatCompletionsStream(response, request, name, stop),
          )
        : post(body, parse, callOptions.signal),
    );
  }

  return { complete };
}
