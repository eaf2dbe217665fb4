import { setMaxListeners } from 'node:events';
import { CodecallError } from '../errors/index.ts';
import type { PromptLogprobsClient } from '../model/index.ts';
import { isRecord } from '../spec/is-record.ts';
import type { ToolformerSample } from './chat-form.ts';
import { scoreSample, type CandidateSample, type ScoredSample, type ScoreOptions } from './score-sample.ts';

export interface CorpusStats {
  /** Lines read. */
  read: number;
  scored: number;
  kept: number;
  /** Samples dropped, by reason: `filter` (delta below tau), `bad-line`, or the error code that stopped one. */
  dropped: Record<string, number>;
}

export interface ScoreCorpusOptions extends Omit<ScoreOptions, 'signal'> {
  readonly lines: AsyncIterable<{ readonly line: string; readonly number: number }>;
  readonly client: PromptLogprobsClient;
  /** Samples scored at once (each is three model requests); default 4. */
  readonly concurrency?: number;
  readonly onKept: (sample: ToolformerSample, scored: ScoredSample, line: number) => void | Promise<void>;
  readonly onProgress?: (stats: Readonly<CorpusStats>) => void;
  readonly signal?: AbortSignal;
}

/** Codes that say the model cannot be used at all: the run stops instead of dropping every sample. */
const FATAL = new Set([
  'MODEL_UNAVAILABLE',
  'MODEL_AUTH',
  'MODEL_REQUEST_INVALID',
  'ABORTED',
  'INVALID_CONFIG',
]);

/**
 * Scores a stream of candidate samples (one JSON object a line: prefix, continuation, tool, input, result, and
 * optionally arguments), `concurrency` at a time, handing each kept one to `onKept`. A line that is not a sample,
 * or a sample the model's reply cannot score, is dropped and counted by reason; a model that cannot be reached or
 * refuses the requests stops the run (its error is thrown).
 */
export async function scoreCorpus(options: ScoreCorpusOptions): Promise<CorpusStats> {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new CodecallError('INVALID_ARGUMENT', 'concurrency must be an integer in 1..256');
  }
  const stats: CorpusStats = { read: 0, scored: 0, kept: 0, dropped: {} };
  const drop = (reason: string): void => {
    stats.dropped[reason] = (stats.dropped[reason] ?? 0) + 1;
  };
  const iterator = options.lines[Symbol.asyncIterator]();
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  // Each sample in flight listens to it (one listener each, removed when it ends): not a leak.
  setMaxListeners(concurrency + 10, signal);
  let fatal: Error | undefined;

  async function worker(): Promise<void> {
    while (fatal === undefined && !signal.aborted) {
      // Async generators queue concurrent next() calls: each line goes to one worker.
      const next = await iterator.next();
      if (next.done === true) return;
      stats.read++;
      const sample = candidateOf(next.value.line);
      if (sample === null) {
        drop('bad-line');
        options.onProgress?.(stats);
        continue;
      }
      try {
        const scored = await scoreSample(options.client, sample, { ...options, signal });
        stats.scored++;
        if (scored.keep) {
          stats.kept++;
          await options.onKept(sample, scored, next.value.number);
        } else drop('filter');
      } catch (error) {
        const code = error instanceof CodecallError ? error.code : undefined;
        if (code === undefined || FATAL.has(code)) {
          fatal ??= error instanceof Error ? error : new Error(String(error));
          stop.abort(error);
          return;
        }
        drop(code);
      }
      options.onProgress?.(stats);
    }
  }

  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  if (fatal !== undefined) throw fatal;
  if (options.signal?.aborted === true) {
    throw new CodecallError('ABORTED', 'scoring the corpus was aborted', { cause: options.signal.reason });
  }
  return stats;
}

function candidateOf(line: string): (CandidateSample & Pick<ToolformerSample, 'arguments'>) | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  const { prefix, continuation, tool, input, result } = value;
  if (
    typeof prefix !== 'string' ||
    prefix === '' ||
    typeof continuation !== 'string' ||
    continuation === '' ||
    typeof tool !== 'string' ||
    typeof input !== 'string' ||
    typeof result !== 'string'
  ) {
    return null;
  }
  const sample = { prefix, continuation, tool, input, result };
  return isRecord(value.arguments) ? { ...sample, arguments: value.arguments } : sample;
}
