import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TOOLFORMER_TAU,
  judgeSample,
  lossWeights,
  weightedLoss,
} from '../../src/toolformer/index.ts';

describe('the Toolformer filter', () => {
  it("keeps the seed's first example and drops its second", () => {
    // The seed (tool-use guide, chapter 3): (l_no_call, l_same, l_call) = (4.5, 4.2, 1.8) and (2.1, 2.0, 1.9).
    const kept = judgeSample({ noCall: 4.5, same: 4.2, call: 1.8 });
    expect(kept.keep).toBe(true);
    expect(kept.delta).toBeCloseTo(2.4, 12);
    const dropped = judgeSample({ noCall: 2.1, same: 2.0, call: 1.9 });
    expect(dropped.keep).toBe(false);
    expect(dropped.delta).toBeCloseTo(0.1, 12);
    expect(DEFAULT_TOOLFORMER_TAU).toBe(1);
  });

  it('takes the lower of the two baselines, not L_same alone', () => {
    // L_same - L_call would be 3.5, but no call at all already predicts the text well: dropped.
    const judged = judgeSample({ noCall: 1.0, same: 4.0, call: 0.5 });
    expect(judged).toEqual({ keep: false, delta: 0.5 });
    // And the other way round: the empty call is the better baseline.
    expect(judgeSample({ noCall: 6, same: 2.5, call: 1 })).toEqual({ keep: true, delta: 1.5 });
  });

  it('keeps a sample exactly at tau (>=) and follows a given tau', () => {
    expect(judgeSample({ noCall: 3, same: 3, call: 2 })).toEqual({ keep: true, delta: 1 });
    expect(judgeSample({ noCall: 4.5, same: 4.2, call: 1.8 }, 2.5).keep).toBe(false);
    expect(judgeSample({ noCall: 2.1, same: 2.0, call: 1.9 }, 0.05).keep).toBe(true);
  });

  it('refuses losses that are not numbers and a tau that is not finite', () => {
    expect(() => judgeSample({ noCall: Number.NaN, same: 1, call: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => judgeSample({ noCall: 1, same: 1, call: 0 }, Number.POSITIVE_INFINITY)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe("the paper's loss weights", () => {
  it('are max(0, 1 - 0.2 t) normalised: 1, 0.8, 0.6, 0.4, 0.2 over 3', () => {
    const weights = lossWeights();
    expect(weights).toHaveLength(5);
    [1, 0.8, 0.6, 0.4, 0.2].forEach((w, t) => expect(weights[t]).toBeCloseTo(w / 3, 15));
    expect(weights.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 15);
  });

  it('follow another decay, and refuse one that would make the window unbounded', () => {
    const half = lossWeights({ decay: 0.5 });
    expect(half).toHaveLength(2);
    expect(half[0]).toBeCloseTo(1 / 1.5, 15);
    expect(half[1]).toBeCloseTo(0.5 / 1.5, 15);
    expect(lossWeights({ decay: 0.1 })).toHaveLength(10);
    expect(lossWeights({ decay: 1 })).toEqual([1]);
    for (const decay of [0, -1, 1.5, Number.NaN, 1e-6]) {
      expect(() => lossWeights({ decay })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
  });

  it('weigh the continuation from its first token, and nothing past the window', () => {
    // -(1*(-3) + 0.8*(-1) + 0.6*(-2) + 0.4*(-0.5) + 0.2*(-4)) / 3 = (3 + 0.8 + 1.2 + 0.2 + 0.8) / 3 = 2
    expect(weightedLoss([-3, -1, -2, -0.5, -4, -100, -100])).toBeCloseTo(2, 12);
    // Shorter than the window: fewer terms on the same scale (the paper's normalisation).
    expect(weightedLoss([-3])).toBeCloseTo(1, 12);
    expect(weightedLoss([])).toBe(0);
    expect(() => weightedLoss([-1, Number.NEGATIVE_INFINITY])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});
