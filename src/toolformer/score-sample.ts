import { CodecallError } from '../errors/index.ts';
import type { PromptLogprobsClient } from '../model/index.ts';
import { followSignal } from '../spec/follow-signal.ts';
import { continuationLoss } from './continuation-loss.ts';
import { DEFAULT_TOOLFORMER_TAU, judgeSample, type SampleLosses } from './filter.ts';
import { prefixWithCall } from './inline-form.ts';
import type { LossWeightOptions } from './weights.ts';

/** A candidate: the text split at the call's position, and the call with the result its tool gave. */
export interface CandidateSample {
  readonly prefix: string;
  readonly continuation: string;
  readonly tool: string;
  readonly input: string;
  readonly result: string;
}

export interface ScoreOptions extends LossWeightOptions {
  /** tau_f; default 1.0. */
  readonly tau?: number;
  readonly signal?: AbortSignal;
}

export interface ScoredSample {
  readonly losses: SampleLosses;
  /** min(L_no_call, L_same) - L_call. */
  readonly delta: number;
  readonly keep: boolean;
}

/** The three texts a sample is scored as, and where the continuation starts in each. */
export function scoringTexts(
  sample: CandidateSample,
): Record<keyof SampleLosses, { text: string; start: number }> {
  if (sample.prefix === '') {
    // The first token has no log-probability: nothing before it to condition on.
    throw new CodecallError('INVALID_ARGUMENT', 'a sample needs text before the call');
  }
  if (sample.continuation === '')
    throw new CodecallError('INVALID_ARGUMENT', 'a sample needs text after the call');
  const call = { tool: sample.tool, input: sample.input };
  const at = (before: string): { text: string; start: number } => ({
    text: before + sample.continuation,
    start: before.length,
  });
  return {
    noCall: at(sample.prefix),
    same: at(prefixWithCall(sample.prefix, { ...call, result: '' })),
    call: at(prefixWithCall(sample.prefix, { ...call, result: sample.result })),
  };
}

/**
 * Scores a sample the paper's way: the weighted loss of its continuation after the text alone (L_no_call), after
 * the call with an empty result (L_same) and after the call with its result (L_call), each read from the model's
 * echoed log-probabilities (three requests, side by side); kept when min(L_no_call, L_same) - L_call >= tau.
 */
export async function scoreSample(
  client: PromptLogprobsClient,
  sample: CandidateSample,
  options: ScoreOptions = {},
): Promise<ScoredSample> {
  const texts = scoringTexts(sample);
  // One failure stops the other two requests: their answers would not be used (spec/follow-signal.ts says why
  // the caller's signal is followed this way).
  const { controller: stop, release } = followSignal(options.signal);
  const signal = stop.signal;
  const lossOf = async ({ text, start }: { text: string; start: number }): Promise<number> => {
    try {
      return continuationLoss(await client.promptLogprobs(text, { signal }), start, text.length, options);
    } catch (error) {
      stop.abort(error);
      throw error;
    }
  };
  let losses: SampleLosses;
  try {
    const [noCall, same, call] = await Promise.all([
      lossOf(texts.noCall),
      lossOf(texts.same),
      lossOf(texts.call),
    ]);
    losses = { noCall, same, call };
  } finally {
    release();
  }
  return { losses, ...judgeSample(losses, options.tau ?? DEFAULT_TOOLFORMER_TAU) };
}
