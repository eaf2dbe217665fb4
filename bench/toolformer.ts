// Toolformer scoring (issue 24, ADR 0052): samples scored per second through `scoreCorpus` against a completions
// server on loopback (the tests' bigram model, in a child process) that answers each request after 50 ms, at concurrency 1, 8 and 32.
// Each sample is three requests side by side, so the ideal is concurrency x 20 samples/s; the target is 0.8 of it.
// Then the process's memory over a long stream of candidates (BENCH_LINES, default 100 000) at concurrency 32 and
// no delay: it should stay flat, as the corpus is read a line at a time.
//
// Between the two, the whole pipeline (positions, sampling, a Calculator call, scoring) as durable tasks, every step
// journaled in SQLite, beside the same steps called directly, at concurrency 1 and 8 (ratio journaled / direct).
//
// Last, the memory of a whole durable run (`codecall toolformer run`'s own function) over a corpus of
// BENCH_RUN_LINES lines (default 20 000; BENCH_RUN_LINES=100000 for the figure;
// bench/toolformer-run-memory.ts): heap and RSS at every tenth.
//
// Runs the built package (dist/) with --expose-gc. Usage: npm run bench:toolformer (BENCH_QUICK=1, BENCH_LINES=n,
// BENCH_RUN_LINES=n; BENCH_ONLY=rate|pipeline|memory|run-memory runs one part).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCompletionsSampler,
  createPromptLogprobsClient,
  createQuickJsDriver,
  createRuntime,
  createSqliteTaskStore,
  defineTool,
  executeInlineCall,
  promptTemplateFor,
  sampleCallsAt,
  samplePositions,
  scoreCorpus,
  scoreSample,
  shardProgram,
  toolformerPipelineTools,
  ToolRegistry,
} from '../dist/internal.js';
import { busyShare, interference, machineTicks, processTicks } from './machine.ts';
import { runMemory } from './toolformer-run-memory.ts';

const quick = process.env.BENCH_QUICK === '1';
const only = process.env.BENCH_ONLY;
const part = (name: string): boolean => only === undefined || only === name;
const sample = JSON.stringify({
  prefix: 'Out of 1400 participants, 400 (or',
  continuation: ' 29%) passed the test.',
  tool: 'Calculator',
  input: '400/1400',
  result: '0.29',
});

async function* candidates(n: number): AsyncGenerator<{ line: string; number: number }> {
  for (let i = 1; i <= n; i++) yield await Promise.resolve({ line: sample, number: i });
}

/** The server in a child process (bench/toolformer-server.ts), so its CPU is not the scorer's. */
async function startServer(delayMs: number): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./toolformer-server.ts', import.meta.url).pathname],
    {
      env: { ...process.env, DELAY_MS: String(delayMs) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [baseUrl] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return {
    baseUrl,
    close: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
console.log(`machine busy before the run: ${(await busyShare(1000))?.toFixed(2) ?? 'n/a'} of its cores`);

if (part('rate')) {
  const slow = await startServer(50);
  try {
    const client = createPromptLogprobsClient({ baseUrl: slow.baseUrl, model: 'bigram' });
    console.log('| concurrency | samples | seconds | samples/s | ideal | ratio | other CPU |');
    console.log('| ----------: | ------: | ------: | --------: | ----: | ----: | --------: |');
    for (const concurrency of [1, 8, 32]) {
      const n = concurrency * (quick ? 20 : 60);
      const ticks = machineTicks();
      const own = processTicks(false);
      const started = performance.now();
      const stats = await scoreCorpus({ lines: candidates(n), client, concurrency, onKept: () => undefined });
      const ms = performance.now() - started;
      if (stats.kept !== n) throw new Error(`kept ${stats.kept} of ${n}`);
      const rate = n / (ms / 1000);
      const ideal = concurrency * 20;
      const after = machineTicks();
      const other =
        ticks && after && own !== null
          ? interference(ticks, after, (processTicks(false) ?? own) - own, ms).otherCpuShare.toFixed(2)
          : 'n/a';
      console.log(
        `| ${concurrency} | ${n} | ${(ms / 1000).toFixed(2)} | ${rate.toFixed(1)} | ${ideal} | ${(rate / ideal).toFixed(2)} | ${other} |`,
      );
    }
  } finally {
    await slow.close();
  }
}

// The whole pipeline per text (positions, m calls sampled, each run and scored) as durable tasks, every step
// journaled in SQLite, side by side with the same steps called directly (no journal, no sandbox), at the same
// concurrency against the same 50 ms server. One text is three round trips in a row (positions, sample, score).
if (part('pipeline')) {
  const server = await startServer(50);
  const dir = await mkdtemp(join(tmpdir(), 'bench-toolformer-'));
  const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  try {
    const http = { baseUrl: server.baseUrl, model: 'bigram' };
    const positionsClient = createPromptLogprobsClient({ ...http, topLogprobs: 10 });
    const scoringClient = createPromptLogprobsClient(http);
    const sampler = createCompletionsSampler(http);
    const calculator = defineTool({
      name: 'Calculator',
      description: 'a / b',
      input: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
      effect: 'read',
      execute: ({ expression }: { expression: string }) => {
        const [a, b] = expression.split('/').map(Number) as [number, number];
        return Math.round((a / b) * 100) / 100;
      },
    });
    const text = (i: number): string => `Day ${i}. Out of 1400 participants, 400 (or 29%) passed the test.`;
    const texts = quick ? 64 : 192;
    const shardLines = 32;
    console.log('\n| concurrency | texts | path | seconds | samples/s | journaled / direct | other CPU |');
    console.log('| ----------: | ----: | ---- | ------: | --------: | -----------------: | --------: |');
    for (const concurrency of [1, 8]) {
      const n = concurrency === 1 ? texts / 4 : texts;
      // Direct: the same steps, a pool of `concurrency` texts.
      const registry = new ToolRegistry([calculator]);
      const template = promptTemplateFor('Calculator', {});
      let next = 0;
      let directScored = 0;
      const ticks0 = machineTicks();
      const own0 = processTicks(false);
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            const t = text(++next);
            for (const p of await samplePositions(positionsClient, template, t)) {
              const sampled = await sampleCallsAt(sampler, template, t, p.at, 'Calculator', {
                callsPerPosition: 1,
              });
              for (const c of sampled.calls) {
                const run = await executeInlineCall(registry, { tool: 'Calculator', input: c.input });
                if (!run.ok) continue;
                const sample = {
                  prefix: t.slice(0, p.at),
                  continuation: t.slice(p.at),
                  tool: 'Calculator',
                  input: c.input,
                  result: run.result,
                };
                await scoreSample(scoringClient, sample);
                directScored++;
              }
            }
          }
        }),
      );
      const directMs = performance.now() - t0;
      const direct = directScored / (directMs / 1000);
      const ticks1 = machineTicks();
      const other = (a: typeof ticks0, b: typeof ticks0, own: number | null, ms: number): string =>
        a && b && own !== null
          ? interference(a, b, (processTicks(false) ?? own) - own, ms).otherCpuShare.toFixed(2)
          : 'n/a';
      console.log(
        `| ${concurrency} | ${n} | direct | ${(directMs / 1000).toFixed(2)} | ${direct.toFixed(1)} | | ${other(ticks0, ticks1, own0, directMs)} |`,
      );

      // Journaled: shards of `shardLines` texts as durable tasks in a fresh SQLite file.
      const store = await createSqliteTaskStore({ path: join(dir, `run-${concurrency}.db`) });
      const steps = toolformerPipelineTools({
        positionsClient,
        scoringClient,
        sampler,
        tools: [calculator],
        callsPerPosition: 1,
      });
      const runtime = createRuntime({
        store,
        drivers: [driver],
        tools: new ToolRegistry([calculator, ...steps]),
      });
      let scored = 0;
      const ticks2 = machineTicks();
      const own2 = processTicks(false);
      const t2 = performance.now();
      try {
        for (let from = 1; from <= n; from += shardLines) {
          const lines = Array.from({ length: Math.min(shardLines, n - from + 1) }, (_, i) => ({
            number: from + i,
            text: text(from + i),
          }));
          const task = await runtime.submit({
            code: shardProgram(lines, { tools: ['Calculator'], concurrency }),
            language: 'javascript',
            limits: { timeoutMs: 600_000, maxConcurrentToolCalls: concurrency * 2 + 4 },
          });
          const view = await runtime.run(task.task_id);
          if (view.status !== 'succeeded')
            throw new Error(`shard task ${view.status}: ${JSON.stringify(view.error)}`);
          const out = view.result?.output as { counts: Record<string, { scored: number }> };
          scored += out.counts.Calculator?.scored ?? 0;
        }
      } finally {
        await runtime.close();
        await store.close();
      }
      const ms = performance.now() - t2;
      if (scored !== directScored) throw new Error(`journaled scored ${scored}, direct ${directScored}`);
      const journaled = scored / (ms / 1000);
      console.log(
        `| ${concurrency} | ${n} | journaled | ${(ms / 1000).toFixed(2)} | ${journaled.toFixed(1)} | ${(journaled / direct).toFixed(2)} | ${other(ticks2, machineTicks(), own2, ms)} |`,
      );
    }
  } finally {
    await driver.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (part('memory')) {
  const lines = Number(process.env.BENCH_LINES ?? (quick ? 10_000 : 100_000));
  const fast = await startServer(0);
  try {
    const client = createPromptLogprobsClient({ baseUrl: fast.baseUrl, model: 'bigram' });
    const rss: string[] = [];
    const step = Math.max(1, Math.floor(lines / 5));
    let next = step;
    const started = performance.now();
    const stats = await scoreCorpus({
      lines: candidates(lines),
      client,
      concurrency: 32,
      onKept: () => undefined,
      onProgress: (s) => {
        // After a full collection (node --expose-gc), so the figure is what is still held, not garbage.
        if (s.read < next) return;
        next += step;
        (globalThis as { gc?: () => void }).gc?.();
        const { rss: resident, heapUsed } = process.memoryUsage();
        rss.push(`${s.read}: heap ${mib(heapUsed)}, RSS ${mib(resident)}`);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `\n${stats.kept} of ${lines} lines kept in ${seconds.toFixed(1)} s (${(lines / seconds).toFixed(0)}/s)`,
    );
    console.log(`RSS by lines read: ${rss.join(', ')}`);
  } finally {
    await fast.close();
  }
}

if (part('run-memory')) {
  const lines = Number(process.env.BENCH_RUN_LINES ?? (quick ? 5_000 : 20_000));
  const server = await startServer(0);
  try {
    const concurrency = Number(process.env.BENCH_RUN_CONCURRENCY ?? 8);
    const shardLines = Number(process.env.BENCH_RUN_SHARD_LINES ?? 50);
    const { points, seconds, report } = await runMemory({
      lines,
      baseUrl: server.baseUrl,
      concurrency,
      shardLines,
    });
    const counts = (report as { counts?: Record<string, unknown> }).counts;
    console.log(
      `\ncodecall toolformer run over ${lines} lines (a calculation every 10th; --concurrency ${concurrency}, --shard-lines ${shardLines}): ${seconds.toFixed(0)} s, ${(lines / seconds).toFixed(0)} lines/s; ${JSON.stringify(counts)}`,
    );
    console.log('| lines read | heap after GC (MiB) | RSS (MiB) | seconds | load (1 min) |');
    console.log('| ---------: | ------------------: | --------: | ------: | -----------: |');
    for (const p of points)
      console.log(`| ${p.lines} | ${p.heapMiB} | ${p.rssMiB} | ${p.seconds} | ${p.load} |`);
  } finally {
    await server.close();
  }
}
