import type { WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import { CodecallError } from '../errors/index.ts';
import { createPromptLogprobsClient, modelConfigFrom } from '../model/index.ts';
import {
  chatFormLine,
  DEFAULT_TOOLFORMER_TAU,
  inlineFormLine,
  lines,
  scoreCorpus,
  type CorpusStats,
} from '../toolformer/index.ts';
import type { CliIo } from './cli-io.ts';
import { integerOption } from './number-options.ts';

export interface ToolformerScoreOptions {
  provider?: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  out: string;
  chatOut?: string;
  tau?: string;
  concurrency?: string;
  json?: boolean;
}

/** How often the progress line is written (stderr), besides the last one. */
const PROGRESS_EVERY_MS = 1000;

/**
 * `codecall toolformer score <candidates.jsonl>`: the filter stage of the pipeline (ADR 0052). Streams candidate
 * samples (one JSON object a line: prefix, continuation, tool, input, result), scores each through the completions
 * API, and writes the kept ones in the inline form (`--out`) and the chat form (`--chat-out`). A progress line goes
 * to stderr; the counts by outcome end the run.
 */
export async function toolformerScore(
  file: string,
  options: ToolformerScoreOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  now: () => number = Date.now,
): Promise<number> {
  const config = modelConfigFrom(env, {
    provider: options.provider ?? 'vllm',
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  if (config === null)
    throw new CodecallError('INVALID_CONFIG', 'give --base-url and --model of the scoring model');
  const tau = options.tau === undefined ? DEFAULT_TOOLFORMER_TAU : Number(options.tau);
  if (!Number.isFinite(tau)) throw new CodecallError('INVALID_ARGUMENT', '--tau must be a number');
  const concurrency =
    options.concurrency === undefined
      ? 4
      : integerOption('--concurrency', options.concurrency, { min: 1, max: 256 });
  const client = createPromptLogprobsClient({
    baseUrl: config.baseUrl,
    model: config.model,
    provider: config.provider,
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
  });
  const input = await openFile(file, 'r');
  const inline = (await openFile(options.out, 'w')).createWriteStream();
  const chat =
    options.chatOut === undefined ? undefined : (await openFile(options.chatOut, 'w')).createWriteStream();
  // A write error (a full disk) is kept and thrown at the next write, instead of crashing the process.
  const failed = new Map<WriteStream, Error>();
  for (const stream of [inline, chat]) stream?.on('error', (error) => failed.set(stream, error));
  const write = async (stream: WriteStream, text: string): Promise<void> => {
    const error = failed.get(stream);
    if (error !== undefined)
      throw new CodecallError('INTERNAL', `cannot write the kept samples: ${error.message}`);
    // With backpressure: a slow disk slows the run instead of buffering every kept sample.
    if (!stream.write(text)) await once(stream, 'drain');
  };
  const started = now();
  let lastProgress = started;
  const progress = (stats: Readonly<CorpusStats>): string => {
    const seconds = Math.max(0.001, (now() - started) / 1000);
    const dropped = Object.values(stats.dropped).reduce((a, b) => a + b, 0);
    return (
      `toolformer: ${stats.read} read, ${stats.scored} scored, ${stats.kept} kept, ${dropped} dropped, ` +
      `${(stats.scored / seconds).toFixed(1)} samples/s\n`
    );
  };
  let stats: CorpusStats;
  try {
    stats = await scoreCorpus({
      lines: lines(input.createReadStream()),
      client,
      tau,
      concurrency,
      onKept: async (sample) => {
        await write(inline, `${inlineFormLine(sample)}\n`);
        if (chat !== undefined) await write(chat, `${chatFormLine(sample)}\n`);
      },
      onProgress: (current) => {
        if (now() - lastProgress < PROGRESS_EVERY_MS) return;
        lastProgress = now();
        io.stderr(progress(current));
      },
    });
  } finally {
    await Promise.all([close(inline), chat === undefined ? undefined : close(chat)]);
  }
  io.stderr(progress(stats));
  if (options.json === true) io.stdout(`${JSON.stringify(stats)}\n`);
  else {
    const reasons = Object.entries(stats.dropped).map(([reason, n]) => `${reason} ${n}`);
    io.stdout(
      `kept ${stats.kept} of ${stats.read}${reasons.length > 0 ? `; dropped: ${reasons.join(', ')}` : ''}\n`,
    );
  }
  return 0;
}

async function openFile(path: string, flags: 'r' | 'w'): Promise<Awaited<ReturnType<typeof open>>> {
  try {
    return await open(path, flags);
  } catch (error) {
    const what = flags === 'r' ? 'read' : 'write';
    throw new CodecallError('INVALID_ARGUMENT', `cannot ${what} ${path}: ${(error as Error).message}`);
  }
}

async function close(stream: WriteStream): Promise<void> {
  if (stream.closed || stream.destroyed) return;
  stream.end();
  await once(stream, 'close').catch(() => undefined);
}
