import { once } from 'node:events';
import { open } from 'node:fs/promises';
import { CodecallError } from '../errors/index.ts';
import {
  corpusFormatOf,
  corpusTexts,
  lines,
  promptTemplateFor,
  sampleCallsAt,
  samplePositions,
} from '../toolformer/index.ts';
import type { CliIo } from './cli-io.ts';
import { toolformerModelOf, type ToolformerModelFlags } from './toolformer-model-flags.ts';

export interface ToolformerSampleOptions extends ToolformerModelFlags {
  out: string;
  json?: boolean;
}

/** Model errors that stop the run: every later request would fail alike. */
const FATAL = new Set(['MODEL_UNAVAILABLE', 'MODEL_AUTH', 'MODEL_REQUEST_INVALID', 'INVALID_CONFIG']);

/**
 * `codecall toolformer sample <corpus>`: the sampling stage alone (ADR 0052): for each text and tool, the
 * candidate positions and m calls at each, written as JSONL candidates (no tool runs, nothing journaled; `run`
 * does the whole pipeline durably). A reply the pipeline cannot use drops what it was for, counted by its code.
 */
export async function toolformerSample(
  corpus: string,
  options: ToolformerSampleOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const model = await toolformerModelOf(options, env);
  let input;
  try {
    input = await open(corpus, 'r');
  } catch (error) {
    throw new CodecallError('INVALID_ARGUMENT', `cannot read ${corpus}: ${(error as Error).message}`);
  }
  let out;
  try {
    out = (await open(options.out, 'w')).createWriteStream();
  } catch (error) {
    await input.close();
    throw new CodecallError('INVALID_ARGUMENT', `cannot write ${options.out}: ${(error as Error).message}`);
  }
  const stats = { texts: 0, positions: 0, sampled: 0, dropped: {} as Record<string, number> };
  const drop = (reason: string, n = 1): void => {
    stats.dropped[reason] = (stats.dropped[reason] ?? 0) + n;
  };
  const texts = corpusTexts(lines(input.createReadStream()), corpusFormatOf(corpus))[Symbol.asyncIterator]();
  let fatal: Error | undefined;
  const worker = async (): Promise<void> => {
    while (fatal === undefined) {
      const next = await texts.next();
      if (next.done === true) return;
      if ('bad' in next.value) {
        drop('bad-line');
        continue;
      }
      const { number, text } = next.value;
      stats.texts++;
      for (const tool of options.tool) {
        const template = promptTemplateFor(tool, model.sampling);
        try {
          const positions = await samplePositions(model.positionsClient, template, text, model.sampling);
          stats.positions += positions.length;
          for (const position of positions) {
            const sampled = await sampleCallsAt(
              model.sampler,
              template,
              text,
              position.at,
              tool,
              model.sampling,
            );
            if (sampled.bad.length > 0) drop('bad-call', sampled.bad.length);
            for (const call of sampled.calls) {
              stats.sampled++;
              const line = JSON.stringify({
                line: number,
                tool,
                prefix: text.slice(0, position.at),
                continuation: text.slice(position.at),
                input: call.input,
                probability: position.probability,
              });
              if (!out.write(`${line}\n`)) await once(out, 'drain');
            }
          }
        } catch (error) {
          const code = error instanceof CodecallError ? error.code : undefined;
          if (code === undefined || FATAL.has(code)) {
            fatal ??= error instanceof Error ? error : new Error(String(error));
            return;
          }
          drop(code);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: model.concurrency }, worker));
  } finally {
    out.end();
    await once(out, 'close').catch(() => undefined);
    await input.close();
  }
  if (fatal !== undefined) throw fatal;
  if (options.json === true) io.stdout(`${JSON.stringify(stats)}\n`);
  else {
    const reasons = Object.entries(stats.dropped).map(([r, n]) => `${r} ${n}`);
    io.stdout(
      `${stats.texts} texts, ${stats.positions} positions, ${stats.sampled} calls sampled${reasons.length > 0 ? `; dropped: ${reasons.join(', ')}` : ''}\n`,
    );
  }
  return 0;
}
