import { CodecallError } from '../errors/index.ts';

/** The paper's and the seed's filtering threshold tau_f. */
export const DEFAULT_TOOLFORMER_TAU = 1.0;

/** The weighted losses of one sample's continuation under the three prefixes. */
export interface SampleLosses {
  /** L_no_call: the text before, with no call at all. */
  readonly noCall: number;
  /** L_same: the text before plus the call with an empty result (`[Calculator(400/1400) -> ]`). */
  readonly same: number;
  /** L_call: the text before plus the call and its result (`[Calculator(400/1400) -> 0.29]`). */
  readonly call: number;
}

export interface SampleJudgement {
  readonly keep: boolean;
  /** delta L = min(L_no_call, L_same) - L_call. */
  readonly delta: number;
}

/**
 * The seed's rule (the paper's L-_i - L+_i >= tau_f): keep the sample when the call with its result makes the
 * continuation easier to predict than both no call and the call without its result, by at least tau.
 */
export function judgeSample(losses: SampleLosses, tau: number = DEFAULT_TOOLFORMER_TAU): SampleJudgement {
  for (const [name, value] of Object.entries(losses)) {
    if (typeof value !== 'number' || Number.isNaN(value)) {
      throw new CodecallError('INVALID_ARGUMENT', `the loss ${name} is not a number`);
    }
  }
  if (!Number.isFinite(tau)) throw new CodecallError('INVALID_ARGUMENT', 'tau must be a finite number');
  const delta = Math.min(losses.noCall, losses.same) - losses.call;
  return { keep: delta >= tau, delta };
}
