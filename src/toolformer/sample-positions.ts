import { CodecallError } from '../errors/index.ts';
import type { PromptLogprobs } from '../model/index.ts';

/** The paper's sampling defaults (section 4.1): threshold tau_s = 0.05, at most k = 5 positions per text. */
export const DEFAULT_SAMPLING_THRESHOLD = 0.05;
export const DEFAULT_SAMPLING_POSITIONS = 5;

export interface PositionOptions {
  /** tau_s: a position is a candidate when the call marker's probability there is at least this. */
  readonly threshold?: number;
  /** k: the most likely positions kept. */
  readonly topK?: number;
  /** The call-start marker; `[` (the paper's `<API>` written as text). */
  readonly marker?: string;
}

/** A place in the text where the model would start a call, and how likely it finds that. */
export interface CallPosition {
  /** UTF-16 index in the text: the call goes before the token that starts here. */
  readonly at: number;
  /** p_i = P(marker | few-shot prompt, text before i), summed over the listed tokens that start with it. */
  readonly probability: number;
}

/**
 * The candidate positions of a text scored as `prompt + text` (the few-shot prompt first): at each token of the text
 * after its first, the probability that the model's next token opens a call instead, read from the top
 * log-probabilities at that position (tokens that are the marker after optional spaces, `[` or ` [`). A marker
 * outside the listed top tokens counts as 0, so ask for enough of them (`logprobs: N`). Positions at or above the
 * threshold, the k most likely, in text order.
 */
export function callPositions(
  scored: PromptLogprobs,
  promptLength: number,
  options: PositionOptions = {},
): CallPosition[] {
  const threshold = options.threshold ?? DEFAULT_SAMPLING_THRESHOLD;
  const topK = options.topK ?? DEFAULT_SAMPLING_POSITIONS;
  const marker = options.marker ?? '[';
  if (!(threshold >= 0 && threshold <= 1)) throw invalid('the sampling threshold must be in [0, 1]');
  if (!Number.isInteger(topK) || topK < 0) throw invalid('topK must be an integer >= 0');
  if (marker === '') throw invalid('the call marker is empty');
  const found: CallPosition[] = [];
  for (let i = 0; i < scored.tokens.length; i++) {
    const at = (scored.offsets[i] as number) - promptLength;
    // Not before the text's first token: a call needs text before it.
    if (at <= 0) continue;
    const top = scored.top[i];
    if (top === null || top === undefined) continue;
    let probability = 0;
    for (const [token, logprob] of Object.entries(top)) {
      if (token.trimStart().startsWith(marker)) probability += Math.exp(logprob);
    }
    if (probability >= threshold && probability > 0)
      found.push({ at, probability: Math.min(1, probability) });
  }
  return found
    .sort((a, b) => b.probability - a.probability || a.at - b.at)
    .slice(0, topK)
    .sort((a, b) => a.at - b.at);
}

function invalid(message: string): CodecallError {
  return new CodecallError('INVALID_ARGUMENT', message);
}
