import { parsePromptLogprobs, type PromptLogprobs } from './completions-logprobs.ts';
import { createJsonPost, invalidConfig, type ProviderHttpOptions } from './json-post.ts';
import { PROVIDER_PRESETS, isModelProvider, type ModelProvider } from './provider-presets.ts';

export interface PromptLogprobsClientOptions extends ProviderHttpOptions {
  readonly model: string;
  /** Only providers whose preset has `promptLogprobs`: openai, vllm, llamacpp. Default vllm. */
  readonly provider?: ModelProvider;
  /** How many top alternatives to ask for at each position (`logprobs: N`); default 1. */
  readonly topLogprobs?: number;
}

export interface PromptLogprobsCallOptions {
  readonly signal?: AbortSignal;
}

/** Scores text with a model: the log-probability of each of its tokens given those before it. */
export interface PromptLogprobsClient {
  promptLogprobs(prompt: string, options?: PromptLogprobsCallOptions): Promise<PromptLogprobs>;
}

/**
 * A client of the completions API's echo (`POST /completions` with `echo: true, logprobs: N` and no or one new
 * token), the way vLLM and llama-cpp-python's server give a prompt's own log-probabilities. The HTTP side
 * (deadline, retries, MODEL_* errors) is the chat client's.
 */
export function createPromptLogprobsClient(options: PromptLogprobsClientOptions): PromptLogprobsClient {
  const provider = options.provider ?? 'vllm';
  if (!isModelProvider(provider)) throw invalidConfig(`unknown model provider "${String(provider)}"`);
  const preset = PROVIDER_PRESETS[provider].promptLogprobs;
  if (preset === undefined) {
    throw invalidConfig(
      `the ${provider} provider does not echo a prompt's log-probabilities on /completions (use vllm, llamacpp or openai)`,
    );
  }
  if (options.model.trim() === '') throw invalidConfig('the model name is empty');
  const top = options.topLogprobs ?? 1;
  if (!Number.isInteger(top) || top < 0 || top > 20)
    throw invalidConfig('topLogprobs must be an integer in 0..20');
  const hint = (status: number, message: string): string | undefined =>
    status >= 400 && status < 500 && /echo|logprob/i.test(message) ? preset.note : undefined;

  const post = createJsonPost(options, '/completions', hint);
  return {
    async promptLogprobs(prompt, callOptions = {}) {
      const body = JSON.stringify({
        model: options.model,
        prompt,
        echo: true,
        logprobs: top,
        max_tokens: preset.maxTokens,
        temperature: 0,
      });
      return await post(body, (text) => parsePromptLogprobs(text, prompt), callOptions.signal);
    },
  };
}
