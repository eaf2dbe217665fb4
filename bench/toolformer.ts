// Toolformer scoring (issue 24, ADR 0052): samples scored per second through `scoreCorpus` against a completions
// server on loopback (the tests' bigram model, in a child process) that answers each request after 50 ms, at concurrency 1, 8 and 32.
// Each sample is three requests side by side, so the ideal is concurrency x 20 samples/s; the target is 0.8 of it.
// Then the process's memory over a long stream of candidates (BENCH_LINES, default 100 000) at concurrency 32 and
// no delay: it should stay flat, as the corpus is read a line at a time.
//
// Runs the built package (dist/) with --expose-gc. Usage: npm run bench:toolformer (BENCH_QUICK=1 or BENCH_LINES=n).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createPromptLogprobsClient, scoreCorpus } from '../dist/internal.js';
import { busyShare, interference, machineTicks, processTicks } from './machine.ts';

const quick = process.env.BENCH_QUICK === '1';
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
