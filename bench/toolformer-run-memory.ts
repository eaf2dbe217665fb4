// The memory of a whole `codecall toolformer run` over a long corpus (issue 24): the CLI's own function, in this
// process (run with --expose-gc), against the bench's completions server. The corpus is a calculation text every
// `every` lines (positions, one sampled call, a Calculator call, scoring) and plain text otherwise (a positions
// request that finds none), shards of `shardLines` lines (default 50) as durable tasks in a fresh SQLite file. The heap after a full
// collection and the RSS are read from the progress lines (one a second) each time another tenth of the corpus
// has been read for positions.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolformerRun } from '../dist/cli/toolformer-run-command.js';

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

export interface RunMemoryPoint {
  readonly lines: number;
  readonly heapMiB: string;
  readonly rssMiB: string;
  readonly seconds: number;
  readonly load: string;
}

export async function runMemory(options: {
  lines: number;
  baseUrl: string;
  every?: number;
  concurrency?: number;
  shardLines?: number;
}): Promise<{ points: RunMemoryPoint[]; seconds: number; report: unknown }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-toolformer-run-'));
  const every = options.every ?? 10;
  try {
    const corpus = join(dir, 'corpus.txt');
    const texts: string[] = [];
    for (let i = 1; i <= options.lines; i++) {
      texts.push(
        i % every === 0
          ? `Day ${i}. Out of 1400 participants, 400 (or 29%) passed the test.`
          : `Line ${i} says nothing that a tool could help with.`,
      );
    }
    await writeFile(corpus, `${texts.join('\n')}\n`);
    texts.length = 0;
    const points: RunMemoryPoint[] = [];
    const step = Math.max(1, Math.floor(options.lines / 10));
    let next = step;
    const started = performance.now();
    const point = (lines: number): void => {
      (globalThis as { gc?: () => void }).gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      points.push({
        lines,
        heapMiB: mib(heapUsed),
        rssMiB: mib(rss),
        seconds: Math.round((performance.now() - started) / 1000),
        load: loadavg()[0]?.toFixed(1) ?? 'n/a',
      });
    };
    point(0);
    let stdout = '';
    const code = await toolformerRun(
      corpus,
      {
        db: join(dir, 'run.db'),
        tools: new URL('../test/toolformer/fixtures/calculator-tools.ts', import.meta.url).pathname,
        tool: ['Calculator'],
        baseUrl: options.baseUrl,
        model: 'bigram',
        m: '1',
        concurrency: String(options.concurrency ?? 8),
        shardLines: String(options.shardLines ?? 50),
        out: join(dir, 'kept.jsonl'),
        json: true,
      },
      {
        stdout: (text: string) => (stdout += text),
        stderr: (text: string) => {
          const read = /^toolformer: (\d+) texts scored for positions/.exec(text);
          const n = read === null ? 0 : Number(read[1]);
          if (n >= next) {
            next = (Math.floor(n / step) + 1) * step;
            point(n);
          }
        },
      },
      { ...process.env },
    );
    if (code !== 0) throw new Error(`toolformer run ended with ${code}`);
    point(options.lines);
    const seconds = (performance.now() - started) / 1000;
    return { points, seconds, report: JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as unknown };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
