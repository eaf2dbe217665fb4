export {
  createOpenAiClient,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
} from './create-openai-client.ts';
export type { OpenAiClientOptions } from './create-openai-client.ts';
export { modelConfigFrom, NO_MODEL_CONFIGURED, noModelConfiguredError } from './model-config.ts';
export type { ModelConfig, ModelEnv, ModelFlags } from './model-config.ts';
export { isModelProvider, MODEL_PROVIDERS, PROVIDER_PRESETS } from './provider-presets.ts';
export type { ModelProvider, ProviderPreset } from './provider-presets.ts';
export { toMistralToolCallId } from './mistral-tool-call-id.ts';
