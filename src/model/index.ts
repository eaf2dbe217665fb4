export {
  createOpenAiClient,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
} from './create-openai-client.ts';
export type { OpenAiClientOptions } from './create-openai-client.ts';
export { modelConfigFrom, NO_MODEL_CONFIGURED, noModelConfiguredError } from './model-config.ts';
export type { ModelConfig, ModelEnv, ModelFlags } from './model-config.ts';
export { isModelProvider, MODEL_PROVIDERS, PROVIDER_PRESETS } from './provider-presets.ts';
export type { ModelProvider, ProviderPreset, ResponseConstraint } from './provider-presets.ts';
export { strictSubsetViolation } from './constraint-forms.ts';
export type { ModelWarning, WarningSink } from './constraint-forms.ts';
export { ReplyValidator, refusalMessage } from './reply-validator.ts';
export type { ValueRefusal } from './reply-validator.ts';
export { toMistralToolCallId } from './mistral-tool-call-id.ts';
export { createJsonPost } from './json-post.ts';
export type { JsonPost, ProviderHttpOptions } from './json-post.ts';
export { parsePromptLogprobs } from './completions-logprobs.ts';
export type { PromptLogprobs } from './completions-logprobs.ts';
export { createPromptLogprobsClient } from './create-prompt-logprobs-client.ts';
export type {
  PromptLogprobsCallOptions,
  PromptLogprobsClient,
  PromptLogprobsClientOptions,
} from './create-prompt-logprobs-client.ts';
export { createCompletionsSampler, parseCompletionTexts } from './create-completions-sampler.ts';
export type {
  CompletionsSampler,
  CompletionsSamplerOptions,
  SampleCompletionsOptions,
} from './create-completions-sampler.ts';
