import { CodecallError } from '../errors/index.ts';
import type { PromptLogprobs } from '../model/index.ts';
import { weightedLoss, type LossWeightOptions } from './weights.ts';

/**
 * The log-probabilities of the continuation's tokens: the tokens of the scored text from `start` (a UTF-16 index,
 * where the continuation begins) to its end, found by their text offsets. The model's tokenizer decides the
 * tokens, so the continuation must begin on a token boundary: a token that spans `start` (the call's `]` merged
 * with the text after it, say) is TOOLFORMER_TOKEN_BOUNDARY. Offsets that never reach the continuation, tokens
 * that stop before the end of the text, or a token without a log-probability are MODEL_BAD_REPLY.
 */
export function continuationLogprobs(scored: PromptLogprobs, start: number, textLength: number): number[] {
  const { offsets, tokens, logprobs } = scored;
  const first = offsets.findIndex((offset) => offset >= start);
  if (first < 0) {
    throw new CodecallError(
      'MODEL_BAD_REPLY',
      `the reply's text offsets do not cover the continuation (it starts at ${start}, the last token at ${offsets.at(-1) ?? 'none'})`,
      { details: { start, tokens: tokens.length } },
    );
  }
  if (offsets[first] !== start) {
    const spanning = first - 1;
    throw new CodecallError(
      'TOOLFORMER_TOKEN_BOUNDARY',
      `the continuation starts inside token ${spanning} (${JSON.stringify(tokens[spanning] ?? '')} at ${offsets[spanning] ?? '?'}): ` +
        'split the text where the model starts a token (before a space)',
      { details: { start, token: spanning, offset: offsets[spanning] } },
    );
  }
  const last = tokens.length - 1;
  if ((offsets[last] as number) + (tokens[last] as string).length < textLength) {
    throw new CodecallError(
      'MODEL_BAD_REPLY',
      `the reply's tokens stop at ${(offsets[last] as number) + (tokens[last] as string).length}, before the end of the text (${textLength})`,
      { details: { start, textLength } },
    );
  }
  const out: number[] = [];
  for (let i = first; i <= last; i++) {
    const logprob = logprobs[i];
    if (logprob === null || logprob === undefined) {
      throw new CodecallError('MODEL_BAD_REPLY', `token ${i} of the continuation has no log-probability`, {
        details: { token: i },
      });
    }
    out.push(logprob);
  }
  return out;
}

/** The paper's weighted loss of the continuation that starts at `start` in a scored text of `textLength`. */
export function continuationLoss(
  scored: PromptLogprobs,
  start: number,
  textLength: number,
  options: LossWeightOptions = {},
): number {
  return weightedLoss(continuationLogprobs(scored, start, textLength), options);
}
