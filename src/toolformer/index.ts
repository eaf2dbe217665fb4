export { lossWeights, TOOLFORMER_WEIGHT_DECAY, weightedLoss } from './weights.ts';
export type { LossWeightOptions } from './weights.ts';
export { DEFAULT_TOOLFORMER_TAU, judgeSample } from './filter.ts';
export type { SampleJudgement, SampleLosses } from './filter.ts';
