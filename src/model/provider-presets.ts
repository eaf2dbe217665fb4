/** The OpenAI-compatible servers we know, each with the quirks the client must honour. */
export type ModelProvider = 'openai' | 'mistral' | 'vllm' | 'ollama' | 'llamacpp';

export const MODEL_PROVIDERS: readonly ModelProvider[] = ['openai', 'mistral', 'vllm', 'ollama', 'llamacpp'];

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
  },
  mistral: {
    provider: 'mistral',
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    defaultModel: 'mistral-small-latest',
    requiresApiKey: true,
    requiredToolChoice: 'any',
    toolCallIds: 'alnum9',
    strictTools: true,
  },
  vllm: {
    provider: 'vllm',
    defaultBaseUrl: 'http://127.0.0.1:8000/v1',
    requiresApiKey: false,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: false,
  },
  ollama: {
    provider: 'ollama',
    defaultBaseUrl: 'http://127.0.0.1:11434/v1',
    requiresApiKey: false,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: false,
  },
  llamacpp: {
    provider: 'llamacpp',
    defaultBaseUrl: 'http://127.0.0.1:8080/v1',
    requiresApiKey: false,
    requiredToolChoice: 'required',
    toolCallIds: 'any',
    strictTools: false,
  },
};

export function isModelProvider(value: unknown): value is ModelProvider {
  return typeof value === 'string' && (MODEL_PROVIDERS as readonly string[]).includes(value);
}
