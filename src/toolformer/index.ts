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
export {
  DEFAULT_FEW_SHOT_PROMPTS,
  fewShotPrompt,
  genericFewShotPrompt,
  PROMPT_INPUT_SLOT,
} from './few-shot-prompts.ts';
export {
  DEFAULT_CALL_TEMPERATURE,
  DEFAULT_CALLS_PER_POSITION,
  DEFAULT_MAX_CALL_TOKENS,
  promptTemplateFor,
  sampleCallsAt,
  samplePositions,
} from './sample-calls.ts';
export type { SampledCalls, SamplingOptions } from './sample-calls.ts';
export { TOOLFORMER_NAMESPACE, toolformerPipelineTools } from './pipeline-tools.ts';
export type { PipelineToolsOptions } from './pipeline-tools.ts';
export { keptSamples, SHARD_PROGRAM_MARK, shardProgram } from './shard-program.ts';
export type { KeptSample, ShardLine, ShardOutput, ShardProgramOptions, ToolCounts } from './shard-program.ts';
export { addShard, deltaHistogramSvg, emptyReport, reportLines } from './run-report.ts';
export type { RunReport } from './run-report.ts';
export { corpusFormatOf, corpusTexts } from './corpus-texts.ts';
export type { CorpusText } from './corpus-texts.ts';
export {
  HISTOGRAM_ARTIFACT,
  REPORT_ARTIFACT,
  reportArtifacts,
  reportOfProgram,
  RUN_REPORT_MARK,
  runReportProgram,
  withReportArtifacts,
} from './report-artifacts.ts';
export type { RunSummary } from './report-artifacts.ts';
