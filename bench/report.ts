import type { BenchReport, Outcome, SystemResult, Targets } from './results.ts';

const CODECALL = 'codecall';
const RUN = 'run';

function ok<T>(outcome: Outcome<T>): T | undefined {
  return outcome.status === 'ok' ? outcome.value : undefined;
}

function ratio(a: number | undefined, b: number | undefined): number | null {
  return a === undefined || b === undefined || b === 0 ? null : a / b;
}

/** The targets: codecall against `run`, plus codecall's own memory per live execution. */
export function computeTargets(systems: readonly SystemResult[]): Targets {
  const codecall = systems.find((s) => s.id === CODECALL);
  const run = systems.find((s) => s.id === RUN);
  const cold = (s?: SystemResult) => (s ? ok(s.coldStart)?.p50Ms : undefined);
  const calls = (s?: SystemResult) => (s ? ok(s.toolLoop)?.callsPerSec : undefined);
  const at8 = (s?: SystemResult) =>
    s ? ok(s.throughput)?.find((t) => t.concurrency === 8)?.perSec : undefined;
  const coldRatio = ratio(cold(codecall), cold(run));
  const callRatio = ratio(calls(codecall), calls(run));
  const execRatio = ratio(at8(codecall), at8(run));
  const memory = codecall ? (ok(codecall.memory)?.perExecutionMiB ?? null) : null;
  return {
    coldStartP50Ratio: { value: coldRatio, target: '<= 0.25', pass: coldRatio !== null && coldRatio <= 0.25 },
    toolCallThroughputRatio: { value: callRatio, target: '>= 5', pass: callRatio !== null && callRatio >= 5 },
    executionsPerSecRatioAt8: {
      value: execRatio,
      target: '>= 5',
      pass: execRatio !== null && execRatio >= 5,
    },
    codecallMemoryPerLiveMiB: { value: memory, target: '<= 2 MiB', pass: memory !== null && memory <= 2 },
  };
}

function cell<T>(outcome: Outcome<T>, pick: (v: T) => number | undefined, digits: number): string {
  if (outcome.status === 'skipped') return 'skipped';
  if (outcome.status === 'error') return 'error';
  const value = pick(outcome.value);
  return value === undefined ? '-' : value.toFixed(digits);
}

const HEADER = [
  'system',
  'cold p50 ms',
  'cold p99 ms',
  'tool calls/s',
  'exec/s c=1',
  'exec/s c=8',
  'exec/s c=64',
  'MiB/live exec',
];

function rows(systems: readonly SystemResult[]): string[][] {
  return systems.map((s) => {
    const at = (c: number) => cell(s.throughput, (v) => v.find((t) => t.concurrency === c)?.perSec, 0);
    return [
      s.name,
      cell(s.coldStart, (v) => v.p50Ms, 2),
      cell(s.coldStart, (v) => v.p99Ms, 2),
      cell(s.toolLoop, (v) => v.callsPerSec, 0),
      at(1),
      at(8),
      at(64),
      cell(s.memory, (v) => v.perExecutionMiB, 3),
    ];
  });
}

/** Every system against `run` on the three ratio metrics (for codecall these are the targets' numbers). */
function ratioRows(systems: readonly SystemResult[]): string[][] {
  const run = systems.find((s) => s.id === RUN);
  if (!run) return [];
  const fmt = (v: number | null) => (v === null ? 'n/a' : v.toFixed(3));
  return systems
    .filter((s) => s.id !== RUN)
    .map((s) => [
      s.name,
      fmt(ratio(ok(s.coldStart)?.p50Ms, ok(run.coldStart)?.p50Ms)),
      fmt(ratio(ok(s.toolLoop)?.callsPerSec, ok(run.toolLoop)?.callsPerSec)),
      fmt(
        ratio(
          ok(s.throughput)?.find((t) => t.concurrency === 8)?.perSec,
          ok(run.throughput)?.find((t) => t.concurrency === 8)?.perSec,
        ),
      ),
    ]);
}

const RATIO_HEADER = ['vs run', 'cold p50 (lower is better)', 'tool calls/s', 'exec/s c=8'];

function targetLines(targets: Targets): [string, string, string, string][] {
  const fmt = (v: number | null, digits: number) => (v === null ? 'n/a' : v.toFixed(digits));
  return [
    [
      'cold start p50, codecall/run',
      fmt(targets.coldStartP50Ratio.value, 3),
      targets.coldStartP50Ratio.target,
      targets.coldStartP50Ratio.pass ? 'PASS' : 'FAIL',
    ],
    [
      'tool calls/s, codecall/run',
      fmt(targets.toolCallThroughputRatio.value, 2),
      targets.toolCallThroughputRatio.target,
      targets.toolCallThroughputRatio.pass ? 'PASS' : 'FAIL',
    ],
    [
      'executions/s at c=8, codecall/run',
      fmt(targets.executionsPerSecRatioAt8.value, 2),
      targets.executionsPerSecRatioAt8.target,
      targets.executionsPerSecRatioAt8.pass ? 'PASS' : 'FAIL',
    ],
    [
      'codecall MiB per live execution',
      fmt(targets.codecallMemoryPerLiveMiB.value, 3),
      targets.codecallMemoryPerLiveMiB.target,
      targets.codecallMemoryPerLiveMiB.pass ? 'PASS' : 'FAIL',
    ],
  ];
}

function align(table: readonly (readonly string[])[]): string {
  const widths = table[0]?.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length))) ?? [];
  return table
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  '))
    .join('\n');
}

function notes(systems: readonly SystemResult[]): string[] {
  const out: string[] = [];
  for (const s of systems) {
    if (s.unavailable) out.push(`${s.name}: not measured: ${s.unavailable}`);
    const other = s.interference?.otherCpuShare ?? 0;
    if (other > 0.05)
      out.push(`${s.name}: other work took ${(other * 100).toFixed(0)}% of the machine's CPU during its run`);
    for (const [metric, outcome] of Object.entries({
      coldStart: s.coldStart,
      toolLoop: s.toolLoop,
      throughput: s.throughput,
      memory: s.memory,
    })) {
      if (s.unavailable) continue;
      if (outcome.status === 'skipped') out.push(`${s.name}: ${metric} skipped: ${outcome.reason}`);
      if (outcome.status === 'error') out.push(`${s.name}: ${metric} error: ${outcome.error}`);
    }
  }
  return out;
}

/** Every metric of a system, loaded over quiet (for cold start, above 1 is slower; for rates, below 1 is). */
function loadRows(quiet: readonly SystemResult[], loaded: readonly SystemResult[]): string[][] {
  const fmt = (v: number | null) => (v === null ? 'n/a' : v.toFixed(2));
  return loaded.map((l) => {
    const q = quiet.find((s) => s.id === l.id);
    const pair = (pick: (s: SystemResult) => number | undefined) => fmt(q ? ratio(pick(l), pick(q)) : null);
    const at = (c: number) => (s: SystemResult) => ok(s.throughput)?.find((t) => t.concurrency === c)?.perSec;
    return [
      l.name,
      l.load ? `${(l.load.achieved * 100).toFixed(0)}%` : '-',
      pair((s) => ok(s.coldStart)?.p50Ms),
      pair((s) => ok(s.coldStart)?.p99Ms),
      pair((s) => ok(s.toolLoop)?.callsPerSec),
      pair(at(1)),
      pair(at(8)),
      pair(at(64)),
      pair((s) => ok(s.memory)?.perExecutionMiB),
    ];
  });
}

const LOAD_HEADER = ['loaded / quiet', 'burners took', ...HEADER.slice(1)];

function sections(
  report: BenchReport,
  table: (t: readonly (readonly string[])[]) => string,
  note: (n: string) => string,
): string[] {
  const one = (systems: readonly SystemResult[], targets: BenchReport['targets']) => [
    table([HEADER, ...rows(systems)]),
    '',
    table([RATIO_HEADER, ...ratioRows(systems)]),
    '',
    table([['target', 'value', 'goal', 'result'], ...targetLines(targets)]),
    '',
    ...notes(systems).map(note),
  ];
  const quiet = one(report.systems, report.targets);
  const loaded = report.loaded;
  if (!loaded) return quiet;
  return [
    'Quiet:',
    '',
    ...quiet,
    '',
    `Under load (BENCH_LOAD=${loaded.share}: burners asked for ${(loaded.share * 100).toFixed(0)}% of the machine):`,
    '',
    ...one(loaded.systems, loaded.targets),
    note('other work under load includes the burners'),
    '',
    table([LOAD_HEADER, ...loadRows(report.systems, loaded.systems)]),
  ];
}

export function formatText(report: BenchReport): string {
  return sections(report, align, (n) => `note: ${n}`).join('\n');
}

export function formatMarkdown(report: BenchReport): string {
  const md = (table: readonly (readonly string[])[]) =>
    [table[0], table[0]?.map(() => '---'), ...table.slice(1)]
      .map((r) => `| ${(r ?? []).join(' | ')} |`)
      .join('\n');
  return sections(report, md, (n) => `- ${n}`).join('\n');
}
