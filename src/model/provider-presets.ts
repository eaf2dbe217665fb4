/** The OpenAI-compatible servers we know, each with the quirks the client must honour. */
export type ModelProvider = 'openai' | 'mistral' | 'vllm' | 'ollama' | 'llamacpp';

export const MODEL_PROVIDERS: readonly ModelProvider[] = ['openai', 'mistral', 'vllm', 'ollama', 'llamacpp'];

/**
 * How a structured final answer's schema goes on the wire (ADR 0057): OpenAI's `response_format` (strict where
 * the provider has it), llama.cpp's own `json_schema` field or a GBNF `grammar` (our export), vLLM's
 * `structured_outputs: { json }` (0.10 and later; `guided_json` before, removed in 0.12), or not at all.
 */
export type ResponseConstraint =
  'response_format' | 'json_schema' | 'grammar' | 'structured_outputs' | 'guided_json' | 'none';

export interface ProviderPreset {
  readonly provider: ModelProvider;
  readonly defaultBaseUrl: string;
  /** Used when no model is given; local servers serve whatever was loaded, so they have none. */
  readonly defaultModel?: string;
  readonly requiresApiKey: boolean;
  /** How `toolChoice: 'required'` goes on the wire (Mistral calls it `any`). */
  readonly requiredToolChoice: 'required' | 'any';
  /** Mistral rejects tool-call ids that are not exactly 9 alphanumeric characters. */
  readonly toolCallIds: 'any' | 'alnum9';
  /**
   * Whether `function.strict` may be sent. OpenAI and Mistral accept it; vLLM's request models have rejected it
   * as an extra input (400 `extra_forbidden`), and Ollama and llama.cpp do not honour it, so they never get it.
   */
  readonly strictTools: boolean;
  /** The form a `responseFormat` takes for this server (the client's `responseConstraint` overrides it). */
  readonly responseConstraint: ResponseConstraint;
  /** Whether `response_format` may say `strict: true` (OpenAI and Mistral). */
  readonly strictResponse: boolean;
  /**
   * How the server gives a prompt's own log-probabilities on `/completions` (`echo: true` with `logprobs`), the
   * legacy shape `{ tokens, token_logprobs, text_offset, top_logprobs }`; absent when it has no such thing.
   * `maxTokens` is what to ask for beside the echo: OpenAI's protocol takes 0, vLLM refuses 0 (its sampling
   * parameters want at least 1) and llama-cpp-python reads 0 as "until the context is full", so they get 1 and
   * the one generated token is cut off by its offset.
   */
  readonly promptLogprobs?: { readonly maxTokens: 0 | 1; readonly note?: string };
}

export const PROVIDER_PRESETS: Readonly<Record<ModelProvider, ProviderPreset>> = {
  openai: {
    provider: 'openai',
    defaultBaseUrl: 'https://api.openai.com/v1',
    defaultModel: 'gpt-4o-mini',
    requiresApiKey: true,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: true,
    responseConstraint: 'response_format',
    strictResponse: true,
    promptLogprobs: { maxTokens: 0 },
  },
  mistral: {
    provider: 'mistral',
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    defaultModel: 'mistral-small-latest',
    requiresApiKey: true,
    requiredToolChoice: 'any',
    toolCallIds: 'alnum9',
    strictTools: true,
    responseConstraint: 'response_format',
    strictResponse: true,
  },
  vllm: {
    provider: 'vllm',
    defaultBaseUrl: 'http://127.0.0.1:8000/v1',
    requiresApiKey: false,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: false,
    responseConstraint: 'structured_outputs',
    strictResponse: false,
    promptLogprobs: { maxTokens: 1 },
  },
  ollama: {
    provider: 'ollama',
    defaultBaseUrl: 'http://127.0.0.1:11434/v1',
    requiresApiKey: false,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: false,
    responseConstraint: 'response_format',
    strictResponse: false,
  },
  llamacpp: {
    provider: 'llamacpp',
    defaultBaseUrl: 'http://127.0.0.1:8080/v1',
    requiresApiKey: false,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: false,
    responseConstraint: 'json_schema',
    strictResponse: false,
    promptLogprobs: {
      maxTokens: 1,
      note:
        'llama.cpp\'s own llama-server refuses echo ("Only no echo is supported"; its pull request 15189 adds it): ' +
        "serve the model with llama-cpp-python's server, or a llama-server build with that change",
    },
  },
};

export function isModelProvider(value: unknown): value is ModelProvider {
  return typeof value === 'string' && (MODEL_PROVIDERS as readonly string[]).includes(value);
}
