// A flood of log lines in one execution must not multiply a neighbour's tool-call latency (issue 15 class 8).
// For each driver: a neighbour makes tool calls one after another, first alone, then while other executions
// on the same driver print empty lines as fast as they can (each ends at OUTPUT_LIMIT and starts again). Prints
// the neighbour's median and p99 call latency both ways and their ratio. Runs the built package (dist/).
// Usage: npm run bench:flood (BENCH_QUICK=1 for a short run).
import { createPythonDriver, createQuickJsDriver, probePython } from '../dist/internal.js';
import type { ExecutionHost, GuestLanguage, HostCall, SandboxDriver } from '../dist/internal.js';
import { median, percentile } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const CALLS = QUICK ? 300 : 2_000;
const FLOODERS = 2;

interface Programs {
  /** Makes CALLS tool calls in sequence; the host times each. */
  readonly neighbour: string;
  /** Prints empty lines until its output limit stops it. */
  readonly flood: string;
}

const PROGRAMS: Record<'javascript' | 'python', Programs> = {
  javascript: {
    neighbour: `for (let i = 0; i < ${CALLS}; i++) await tools.one();\nreturn 'done';`,
    // Bursts of empty lines, yielding between them (a timer): the worker runs the neighbour in between, so what
    // is measured is what the lines cost the host, not a guest that never yields (that one holds its worker).
    flood:
      'for (;;) {\n  for (let i = 0; i < 1000; i++) console.log();\n  await new Promise((r) => setTimeout(r, 0));\n}',
  },
  python: {
    neighbour: `for i in range(${CALLS}):\n    tools.one()\n'done'`,
    flood: 'import time\nwhile True:\n    for i in range(1000):\n        print()\n    time.sleep(0)',
  },
};

const quietHost: ExecutionHost = {
  call: (c: HostCall) =>
    Promise.resolve(c.kind === 'timer' ? { ok: true, value: null } : { ok: true, value: 1 }),
};

/** The neighbour's per-call latencies: time from one call's arrival on the host to the next one's. */
async function neighbourLatencies(
  driver: SandboxDriver,
  language: GuestLanguage,
  code: string,
): Promise<number[]> {
  const gaps: number[] = [];
  let last = 0;
  const host: ExecutionHost = {
    call: (c: HostCall) => {
      const now = performance.now();
      if (last > 0) gaps.push(now - last);
      last = now;
      return quietHost.call(c, new AbortController().signal);
    },
  };
  const result = await driver.execute({
    code,
    language,
    tools: [{ namespace: 'tools', name: 'one' }],
    host,
    limits: { timeoutMs: 120_000, maxToolCalls: CALLS + 10 },
  });
  if (result.status !== 'succeeded') throw new Error(`the neighbour failed: ${JSON.stringify(result.error)}`);
  return gaps;
}

async function measure(
  name: string,
  driver: SandboxDriver,
  language: 'javascript' | 'python',
): Promise<void> {
  const programs = PROGRAMS[language];
  await neighbourLatencies(driver, language, programs.neighbour); // warm up
  const alone = await neighbourLatencies(driver, language, programs.neighbour);
  let flooding = true;
  let floods = 0;
  const flooder = async (): Promise<void> => {
    while (flooding) {
      await driver.execute({
        code: programs.flood,
        language,
        tools: [],
        host: quietHost,
        limits: { timeoutMs: 30_000 },
      });
      floods++;
    }
  };
  const flooders = Array.from({ length: FLOODERS }, flooder);
  const flooded = await neighbourLatencies(driver, language, programs.neighbour);
  flooding = false;
  await Promise.all(flooders);
  const p99 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      99,
    );
  const row = (xs: number[]) => `median ${median(xs).toFixed(3)} ms, p99 ${p99(xs).toFixed(3)} ms`;
  console.log(`${name}: a neighbour's tool call alone:          ${row(alone)}`);
  console.log(`${name}: ... while ${FLOODERS} executions flood logs:  ${row(flooded)} (${floods} floods)`);
  console.log(
    `${name}: ratio (flooded / alone): median ${(median(flooded) / median(alone)).toFixed(2)}x, p99 ${(p99(flooded) / p99(alone)).toFixed(2)}x`,
  );
}

const quickjs = createQuickJsDriver({ workers: 2 });
await quickjs.ready();
await measure('quickjs', quickjs, 'javascript');
await quickjs.close();

const probe = await probePython();
if (probe.ok) {
  const python = createPythonDriver({ warm: FLOODERS + 1 });
  await python.ready();
  await measure('python', python, 'python');
  await python.close();
} else {
  console.log(`python skipped: ${probe.reason}`);
}
