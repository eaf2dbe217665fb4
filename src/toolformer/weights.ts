import { CodecallError } from '../errors/index.ts';

/** The paper's decay: w~_t = max(0, 1 - 0.2 t), so the loss looks at the first 5 tokens after the call. */
export const TOOLFORMER_WEIGHT_DECAY = 0.2;

export interface LossWeightOptions {
  /** w~_t = max(0, 1 - decay * t); in (0, 1]. Default 0.2 (Schick et al. 2023, section 4.1). */
  readonly decay?: number;
}

/**
 * The paper's weights over the tokens that follow the call: w_t = w~_t / sum_s w~_s with
 * w~_t = max(0, 1 - decay * t), t = 0 the continuation's first token. Only the nonzero ones are returned (the
 * window: 1, 0.8, 0.6, 0.4, 0.2 over 3 at the default decay). They are normalised over the whole window, as in
 * the paper, whatever the continuation's length: a continuation shorter than the window just has fewer terms, so
 * every prefix of one sample is weighed on the same scale.
 */
export function lossWeights(options: LossWeightOptions = {}): readonly number[] {
  const decay = options.decay ?? TOOLFORMER_WEIGHT_DECAY;
  // 1e-3 caps the window at 1000 tokens: a decay near 0 would make it unbounded.
  if (!(decay >= 1e-3 && decay <= 1)) {
    throw new CodecallError('INVALID_ARGUMENT', `the loss weight decay must be in [0.001, 1], not ${decay}`);
  }
  const raw: number[] = [];
  for (let t = 0; ; t++) {
    const w = 1 - decay * t;
    // 1 - 0.2 * 5 is 0 in doubles, but other decays leave a crumb (1 - 0.1 * 10 = 1.1e-16): not a weight.
    if (w <= 1e-9) break;
    raw.push(w);
  }
  const total = raw.reduce((sum, w) => sum + w, 0);
  return raw.map((w) => w / total);
}

/**
 * The paper's weighted cross-entropy of a continuation, L = -sum_t w_t log p(x_t | prefix, x_<t), from the
 * log-probabilities of its tokens in order (natural log, as the completions API gives them). Tokens past the
 * window weigh nothing.
 */
export function weightedLoss(tokenLogprobs: readonly number[], options: LossWeightOptions = {}): number {
  const weights = lossWeights(options);
  let loss = 0;
  const n = Math.min(weights.length, tokenLogprobs.length);
  for (let t = 0; t < n; t++) {
    const logprob = tokenLogprobs[t] as number;
    if (!Number.isFinite(logprob)) {
      throw new CodecallError('INVALID_ARGUMENT', `token ${t}'s log-probability is not a finite number`, {
        details: { token: t },
      });
    }
    loss -= (weights[t] as number) * logprob;
  }
  return loss;
}
