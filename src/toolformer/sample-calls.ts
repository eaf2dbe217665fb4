import { CodecallError } from '../errors/index.ts';
import type { CompletionsSampler, PromptLogprobsClient } from '../model/index.ts';
import { DEFAULT_FEW_SHOT_PROMPTS, fewShotPrompt, genericFewShotPrompt } from './few-shot-prompts.ts';
import { parseInlineCall } from './inline-form.ts';
import { callPositions, type CallPosition, type PositionOptions } from './sample-positions.ts';

/** The paper's m: calls sampled at each position (section 4.1 samples up to m = 5). */
export const DEFAULT_CALLS_PER_POSITION = 5;
/** A sampled call longer than this many tokens is cut off (and then unparsable: dropped as `bad-call`). */
export const DEFAULT_MAX_CALL_TOKENS = 64;
/** Sampling temperature for calls (the paper samples; 1 draws from the model's own distribution). */
export const DEFAULT_CALL_TEMPERATURE = 1;

export interface SamplingOptions extends PositionOptions {
  /** Few-shot prompts by tool name, each holding `{input}`; default the paper's (Calculator, QA), else generic. */
  readonly prompts?: Readonly<Record<string, string>>;
  /** m: calls sampled per position (deduplicated by input). */
  readonly callsPerPosition?: number;
  readonly temperature?: number;
  readonly maxCallTokens?: number;
}

/** The few-shot prompt of a tool: the caller's, the paper's, or a generic one naming the tool. */
export function promptTemplateFor(
  tool: string,
  options: Pick<SamplingOptions, 'prompts'>,
  description?: string,
): string {
  return options.prompts?.[tool] ?? DEFAULT_FEW_SHOT_PROMPTS[tool] ?? genericFewShotPrompt(tool, description);
}

/**
 * The candidate positions of `text` for one tool: the text is scored after the tool's few-shot prompt and the
 * positions where the call marker is likeliest (at least tau_s, the top k) come back, in text order.
 */
export async function samplePositions(
  client: PromptLogprobsClient,
  template: string,
  text: string,
  options: SamplingOptions & { readonly signal?: AbortSignal } = {},
): Promise<CallPosition[]> {
  const head = fewShotPrompt(template, text);
  const scored = await client.promptLogprobs(head + text, options.signal ? { signal: options.signal } : {});
  return callPositions(scored, head.length, options);
}

/** What sampling at one position gave: the distinct calls, and the replies that were not a call of the tool. */
export interface SampledCalls {
  readonly calls: readonly { readonly input: string }[];
  /** Completions that did not parse as `[Tool(input)]` (kept, for the report's `bad-call` reason). */
  readonly bad: readonly string[];
}

/**
 * m calls sampled at position `at`: the model continues `few-shot prompt + text before + [` (the paper's <API>),
 * stopping at `]` (its </API>) or a newline; each completion must read as a call of this tool, `Tool(input)`
 * (a `-> result` it made up is ignored: the tool gives the result). Calls with the same input count once.
 */
export async function sampleCallsAt(
  sampler: CompletionsSampler,
  template: string,
  text: string,
  at: number,
  tool: string,
  options: SamplingOptions & { readonly signal?: AbortSignal } = {},
): Promise<SampledCalls> {
  if (!Number.isInteger(at) || at <= 0 || at >= text.length) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `a call position must be inside the text (1..${text.length - 1})`,
    );
  }
  const marker = options.marker ?? '[';
  const before = text.slice(0, at);
  const prompt = `${fewShotPrompt(template, text)}${before}${/\s$/.test(before) ? '' : ' '}${marker}`;
  const completions = await sampler.sample(prompt, {
    n: options.callsPerPosition ?? DEFAULT_CALLS_PER_POSITION,
    temperature: options.temperature ?? DEFAULT_CALL_TEMPERATURE,
    maxTokens: options.maxCallTokens ?? DEFAULT_MAX_CALL_TOKENS,
    stop: [']', '\n'],
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const seen = new Set<string>();
  const calls: { input: string }[] = [];
  const bad: string[] = [];
  for (const completion of completions) {
    const text = `[${completion.replace(/\]$/, '')}]`;
    const parsed = parseInlineCall(text);
    if (
      parsed === null ||
      parsed.end !== text.length ||
      parsed.call.tool !== tool ||
      parsed.call.input.trim() === ''
    ) {
      bad.push(completion.slice(0, 200));
      continue;
    }
    if (seen.has(parsed.call.input)) continue;
    seen.add(parsed.call.input);
    calls.push({ input: parsed.call.input });
  }
  return { calls, bad };
}
