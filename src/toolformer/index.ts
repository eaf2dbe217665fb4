export { lossWeights, TOOLFORMER_WEIGHT_DECAY, weightedLoss } from './weights.ts';
export type { LossWeightOptions } from './weights.ts';
export { DEFAULT_TOOLFORMER_TAU, judgeSample } from './filter.ts';
export type { SampleJudgement, SampleLosses } from './filter.ts';
export {
  escapeInline,
  findInlineCall,
  inlineFormLine,
  MAX_INLINE_CALL_CHARS,
  parseInlineCall,
  prefixWithCall,
  renderInlineCall,
} from './inline-form.ts';
export type { InlineCall, ParsedInlineCall } from './inline-form.ts';
export { chatFormLine, chatFormRecord } from './chat-form.ts';
export type { ChatFormOptions, ChatFormRecord, ChatFormTool, ToolformerSample } from './chat-form.ts';
export { continuationLogprobs, continuationLoss } from './continuation-loss.ts';
export { scoreSample, scoringTexts } from './score-sample.ts';
export type { CandidateSample, ScoredSample, ScoreOptions } from './score-sample.ts';
export { callPositions, DEFAULT_SAMPLING_POSITIONS, DEFAULT_SAMPLING_THRESHOLD } from './sample-positions.ts';
export type { CallPosition, PositionOptions } from './sample-positions.ts';
export { DEFAULT_MAX_RESULT_CHARS, executeInlineCall, inlineArguments, resultText } from './execute-call.ts';
export type { ExecutedCall, ExecuteCallOptions } from './execute-call.ts';
export { DEFAULT_MAX_LINE_BYTES, lines } from './jsonl-lines.ts';
export { scoreCorpus } from './score-corpus.ts';
export type { CorpusStats, ScoreCorpusOptions } from './score-corpus.ts';
