import { CodecallError } from '../errors/index.ts';
import { isRecord } from '../spec/is-record.ts';
import { createJsonPost, invalidConfig, type ProviderHttpOptions } from './json-post.ts';
import { PROVIDER_PRESETS, isModelProvider, type ModelProvider } from './provider-presets.ts';

export interface CompletionsSamplerOptions extends ProviderHttpOptions {
  readonly model: string;
  /** Only providers with a completions endpoint: openai, vllm, llamacpp (the ones that also echo). Default vllm. */
  readonly provider?: ModelProvider;
}

export interface SampleCompletionsOptions {
  /** How many completions (`n`); a server that returns fewer is asked again for the rest. */
  readonly n: number;
  readonly temperature?: number;
  readonly maxTokens: number;
  /** Strings that end a completion (the call-end marker), not included in it. */
  readonly stop?: readonly string[];
  readonly signal?: AbortSignal;
}

/** Draws continuations of a prompt from the completions API (`POST /completions` with `n`, `temperature`, `stop`). */
export interface CompletionsSampler {
  sample(prompt: string, options: SampleCompletionsOptions): Promise<string[]>;
}

/**
 * A client of the completions API that samples: vLLM and OpenAI honour `n`; llama-cpp-python's server answers one
 * choice whatever `n` says, so a reply with fewer choices than asked is followed by requests for the rest (at
 * most `n` requests in all). A reply without choices or with a choice that has no text is MODEL_BAD_REPLY, its
 * body kept in the error's details.
 */
export function createCompletionsSampler(options: CompletionsSamplerOptions): CompletionsSampler {
  const provider = options.provider ?? 'vllm';
  if (!isModelProvider(provider)) throw invalidConfig(`unknown model provider "${String(provider)}"`);
  if (PROVIDER_PRESETS[provider].promptLogprobs === undefined) {
    throw invalidConfig(
      `the ${provider} provider has no completions endpoint to sample from (use vllm, llamacpp or openai)`,
    );
  }
  if (options.model.trim() === '') throw invalidConfig('the model name is empty');
  const post = createJsonPost(options, '/completions');
  return {
    async sample(prompt, call) {
      if (!Number.isInteger(call.n) || call.n < 1 || call.n > 64) {
        throw new CodecallError('INVALID_ARGUMENT', 'n must be an integer in 1..64');
      }
      if (!Number.isInteger(call.maxTokens) || call.maxTokens < 1) {
        throw new CodecallError('INVALID_ARGUMENT', 'maxTokens must be an integer >= 1');
      }
      const out: string[] = [];
      for (let requests = 0; out.length < call.n && requests < call.n; requests++) {
        const body = JSON.stringify({
          model: options.model,
          prompt,
          n: call.n - out.length,
          max_tokens: call.maxTokens,
          temperature: call.temperature ?? 1,
          ...(call.stop === undefined || call.stop.length === 0 ? {} : { stop: call.stop }),
        });
        out.push(...(await post(body, parseCompletionTexts, call.signal)));
      }
      return out.slice(0, call.n);
    },
  };
}

/** The choices' texts of a `/completions` reply; MODEL_BAD_REPLY when there are none or one is not text. */
export function parseCompletionTexts(text: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw badReply('the model server sent a body that is not JSON', text, error);
  }
  const choices = isRecord(body) ? body.choices : undefined;
  if (!Array.isArray(choices) || choices.length === 0)
    throw badReply('the completions reply has no choices', text);
  return choices.map((choice, i) => {
    if (!isRecord(choice) || typeof choice.text !== 'string') {
      throw badReply(`choice ${i} of the completions reply has no text`, text);
    }
    return choice.text;
  });
}

function badReply(message: string, text: string, cause?: unknown): CodecallError {
  return new CodecallError('MODEL_BAD_REPLY', message, { details: { body: text.slice(0, 500) }, cause });
}
