import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { open, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { CodecallError } from '../errors/index.ts';
import {
  addShard,
  chatFormLine,
  corpusFormatOf,
  corpusTexts,
  deltaHistogramSvg,
  emptyReport,
  inlineFormLine,
  keptSamples,
  lines,
  reportLines,
  runReportProgram,
  shardProgram,
  withReportArtifacts,
  toolformerPipelineTools,
  type RunSummary,
  type ShardLine,
  type ShardOutput,
} from '../toolformer/index.ts';
import type { CliIo } from './cli-io.ts';
import type { TaskView } from '../api/index.ts';
import { DEFAULT_TOOL_NAMESPACE } from '../tools/index.ts';
import { hasMcp, mcpMetadata } from './mcp-options.ts';
import type { McpFlags } from './mcp-options.ts';
import { integerOption } from './number-options.ts';
import { toolsMetadata } from './remembered-tools.ts';
import { interruptOnSigint } from './sigint.ts';
import { withCliRuntime, type CliRuntime } from './task-runtime.ts';
import { tauOf, toolformerModelOf, type ToolformerModelFlags } from './toolformer-model-flags.ts';

export interface ToolformerRunOptions extends ToolformerModelFlags, McpFlags {
  db: string;
  tools?: string;
  out: string;
  chatOut?: string;
  tau?: string;
  shardLines?: string;
  json?: boolean;
}

/** A shard's corpus text is at most this many bytes (its task's program carries it; programs are 1 MiB at most). */
const MAX_SHARD_BYTES = 256 * 1024;
const PROGRESS_EVERY_MS = 1000;

/**
 * `codecall toolformer run <corpus>`: the whole pipeline as durable tasks (ADR 0052, amended). The corpus is read
 * as a stream and cut into shards; each shard is one task whose program samples positions and calls, runs the
 * calls as its own tool calls and scores them, every step journaled. A shard's task id is a digest of its lines
 * and the run's settings, so the same command again finds the tasks: finished shards are read from their results,
 * an interrupted one (SIGKILL, a pause, a model server that was down) resumes from its journal, asking the model
 * and running tools only for what was not journaled. The kept samples are written in shard order, then the report
 * (counts per tool, delta L histogram as SVG) beside them.
 */
export async function toolformerRun(
  corpus: string,
  options: ToolformerRunOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  now: () => number = Date.now,
): Promise<number> {
  const model = await toolformerModelOf(options, env);
  const tau = tauOf(options.tau);
  const shardLines =
    options.shardLines === undefined
      ? 50
      : integerOption('--shard-lines', options.shardLines, { min: 1, max: 10_000 });
  const input = await openRead(corpus);
  const total = (await stat(corpus)).size;
  const format = corpusFormatOf(corpus);
  const settings = JSON.stringify({
    model: model.identity,
    tools: options.tool,
    tau,
    sampling: model.sampling,
    concurrency: model.concurrency,
  });
  const live = { positions: 0, samples: 0, scored: 0, kept: 0 };
  const interrupt = interruptOnSigint(io.stderr, {
    first: () => 'pausing the Toolformer run (SIGINT); the same command resumes it',
    second: () => 'stopped at once (second SIGINT); the same command resumes the run',
  });
  try {
    return await withCliRuntime(
      {
        db: options.db,
        mustExist: false,
        runs: true,
        tools: options.tools,
        env,
        mcp: options,
        // Each shard's task, and the run's summary task, keeps its report and histogram as artifacts.
        wrapDriver: withReportArtifacts,
        moreTools: (tools) =>
          toolformerPipelineTools({
            ...model.sampling,
            tau,
            positionsClient: model.positionsClient,
            scoringClient: model.scoringClient,
            sampler: model.sampler,
            tools,
            onStep: (step, outcome) => {
              if (step === 'positions') live.positions++;
              else if (step === 'sample') live.samples++;
              else {
                live.scored++;
                if (outcome?.keep === true) live.kept++;
              }
            },
          }),
      },
      async ({ runtime, toolsModule, tools }) => {
        const known = new Set(
          tools.map((t) => (t.namespace === DEFAULT_TOOL_NAMESPACE ? t.name : `${t.namespace}.${t.name}`)),
        );
        for (const name of options.tool) {
          if (!known.has(name)) {
            throw new CodecallError(
              'INVALID_ARGUMENT',
              `--tool ${name}: no such tool (give --tools MODULE or --mcp)`,
            );
          }
        }
        const inline = await writer(options.out);
        const chat = options.chatOut === undefined ? undefined : await writer(options.chatOut);
        const report = emptyReport(tau);
        const started = now();
        let lastProgress = started;
        let doneBytes = 0;
        let badLines = 0;
        const progress = (): string => {
          const seconds = Math.max(0.001, (now() - started) / 1000);
          const fraction = total === 0 ? 1 : doneBytes / total;
          const eta =
            fraction > 0 && fraction < 1 ? ` ETA ${Math.round((seconds / fraction) * (1 - fraction))}s,` : '';
          return `toolformer: ${live.positions} texts scored for positions, ${live.samples} positions sampled, ${live.scored} samples scored, ${live.kept} kept, ${(live.scored / seconds).toFixed(1)} samples/s,${eta} ${Math.round(fraction * 100)}% of the corpus\n`;
        };
        const timer = setInterval(() => {
          if (now() - lastProgress >= PROGRESS_EVERY_MS) {
            lastProgress = now();
            io.stderr(progress());
          }
        }, PROGRESS_EVERY_MS);
        timer.unref();
        const metadata = {
          ...(toolsModule === null ? {} : toolsMetadata(toolsModule)),
          ...(hasMcp(options) ? mcpMetadata(options) : {}),
        };
        let shard = 0;
        // The summary task's id: the settings and every shard's, so the same run finds it again.
        const runDigest = createHash('sha256').update(settings);
        const runShard = async (batch: ShardLine[], bytes: number): Promise<boolean> => {
          const id = `toolformer-${createHash('sha256').update(settings).update(JSON.stringify(batch)).digest('hex').slice(0, 32)}`;
          shard++;
          runDigest.update(id);
          let view = await runtime.get(id);
          if (view === null) {
            const code = shardProgram(batch, {
              tools: options.tool,
              concurrency: model.concurrency,
              tau,
            });
            view = await runtime.submit({
              id,
              code,
              language: 'javascript',
              limits: {
                timeoutMs: 24 * 3600 * 1000,
                maxConcurrentToolCalls: Math.min(
                  256,
                  model.concurrency * (model.sampling.callsPerPosition ?? 5) + 4,
                ),
                maxToolCalls: 1_000_000,
              },
              metadata: { ...metadata, toolformer: { corpus: resolve(corpus), shard } },
            });
          }
          // Paused by Ctrl-C or a shutdown, or waiting for a model server that was down: this command goes on.
          if (view.status === 'paused' && resumable(view))
            view = await runtime.resume(id, { actor: 'toolformer run' });
          if (view.status !== 'succeeded') {
            view = await runtime.run(id, { signal: interrupt.signal });
          }
          if (view.status !== 'succeeded') {
            io.stderr(`${stoppedText(view, shard)}\n`);
            return false;
          }
          const output = view.result?.output as ShardOutput;
          addShard(report, output);
          for (const sample of keptSamples(output, batch)) {
            await inline.write(`${inlineFormLine(sample)}\n`);
            if (chat !== undefined) await chat.write(`${chatFormLine(sample)}\n`);
          }
          doneBytes += bytes;
          return true;
        };
        let ok = true;
        try {
          let batch: ShardLine[] = [];
          let batchBytes = 0;
          for await (const text of corpusTexts(lines(input.createReadStream(), MAX_SHARD_BYTES), format)) {
            if ('bad' in text) {
              badLines++;
              continue;
            }
            const bytes = Buffer.byteLength(text.text) + 1;
            if (batch.length > 0 && (batch.length >= shardLines || batchBytes + bytes > MAX_SHARD_BYTES)) {
              ok = await runShard(batch, batchBytes);
              batch = [];
              batchBytes = 0;
              if (!ok) break;
            }
            batch.push({ number: text.number, text: text.text });
            batchBytes += bytes;
          }
          if (ok && batch.length > 0) ok = await runShard(batch, batchBytes);
        } finally {
          clearInterval(timer);
          await Promise.all([inline.close(), chat?.close()]);
          await input.close();
        }
        if (!ok) return 1;
        doneBytes = total;
        io.stderr(progress());
        const base = join(dirname(options.out), basename(options.out, extname(options.out)));
        const svg = `${base}.delta-histogram.svg`;
        const reportFile = `${base}.report.json`;
        await writeFile(svg, deltaHistogramSvg(report));
        await writeFile(reportFile, `${JSON.stringify({ ...report, bad_lines: badLines }, null, 2)}\n`);
        const summary = await runSummaryTask(runtime, {
          id: `toolformer-run-${runDigest.digest('hex').slice(0, 32)}`,
          summary: { ...report, bad_lines: badLines, shards: shard },
          metadata: { ...metadata, toolformer: { corpus: resolve(corpus), shards: shard } },
          signal: interrupt.signal,
        });
        if (summary.status !== 'succeeded') io.stderr(`${stoppedText(summary, 0)}\n`);
        const taskId = summary.task_id;
        if (options.json === true) {
          io.stdout(
            `${JSON.stringify({ ...report, bad_lines: badLines, svg, report: reportFile, task_id: taskId })}\n`,
          );
        } else {
          for (const line of reportLines(report)) io.stdout(`${line}\n`);
          if (badLines > 0) io.stdout(`${badLines} corpus lines were not texts\n`);
          io.stdout(`report: ${reportFile}\nhistogram: ${svg}\n`);
          io.stdout(
            `the run's task: ${taskId} (its report and histogram are its artifacts: codecall serve --db ${options.db}, console page #/tasks/${taskId})\n`,
          );
        }
        return 0;
      },
    );
  } finally {
    interrupt.release();
  }
}

/**
 * The run's summary task: a program that returns the run's report, so the run is one task in the console with
 * the whole run's report and histogram as artifacts. Found again by its id when the same command runs again.
 */
async function runSummaryTask(
  runtime: CliRuntime['runtime'],
  options: { id: string; summary: RunSummary; metadata: Record<string, unknown>; signal: AbortSignal },
): Promise<TaskView> {
  let view = await runtime.get(options.id);
  view ??= await runtime.submit({
    id: options.id,
    code: runReportProgram(options.summary),
    language: 'javascript',
    metadata: options.metadata,
  });
  if (view.status === 'paused' && resumable(view))
    view = await runtime.resume(options.id, { actor: 'toolformer run' });
  if (view.status !== 'succeeded') view = await runtime.run(options.id, { signal: options.signal });
  return view;
}

/** A paused shard this command resumes by itself: nobody's decision is awaited. */
function resumable(view: TaskView): boolean {
  return (
    view.pause_reason === 'user_request' ||
    view.pause_reason === 'shutdown' ||
    (view.pause_reason === 'needs_attention' && view.error?.code === 'TOOL_UNAVAILABLE')
  );
}

/** Why the run stopped at a shard, and what goes on from there. */
function stoppedText(view: TaskView, shard: number): string {
  const error =
    view.error === null || view.error === undefined ? '' : `: ${view.error.code}: ${view.error.message}`;
  const head = `${shard === 0 ? "the run's summary" : `shard ${shard}`} (task ${view.task_id}) ${view.status}${view.pause_reason === null ? '' : ` (${view.pause_reason})`}${error}`;
  if (view.status === 'paused' && resumable(view)) return `${head}\nthe same command resumes the run`;
  if (view.status === 'paused') {
    return `${head}\nit waits for a person (codecall tasks show ${view.task_id} --db ...); decide without --resume, then run the same command again`;
  }
  return `${head}\nthis shard's task has ended; a run with other settings (or another --db) starts afresh`;
}

async function openRead(path: string): Promise<Awaited<ReturnType<typeof open>>> {
  try {
    return await open(path, 'r');
  } catch (error) {
    throw new CodecallError('INVALID_ARGUMENT', `cannot read ${path}: ${(error as Error).message}`);
  }
}

/** A file written with backpressure; a write error is kept and raised at the next write. */
async function writer(path: string): Promise<{ write(text: string): Promise<void>; close(): Promise<void> }> {
  let stream: WriteStream;
  try {
    stream = createWriteStream(path, { flags: 'w' });
    await once(stream, 'open');
  } catch (error) {
    throw new CodecallError('INVALID_ARGUMENT', `cannot write ${path}: ${(error as Error).message}`);
  }
  let failed: Error | undefined;
  stream.on('error', (error) => (failed = error));
  return {
    async write(text) {
      if (failed !== undefined)
        throw new CodecallError('INTERNAL', `cannot write ${path}: ${failed.message}`);
      if (!stream.write(text)) await once(stream, 'drain');
    },
    async close() {
      if (stream.closed || stream.destroyed) return;
      stream.end();
      await once(stream, 'close').catch(() => undefined);
    },
  };
}
