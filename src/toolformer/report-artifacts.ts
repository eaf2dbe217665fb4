import type { SandboxDriver, WorkspaceFile } from '../spec/index.ts';
import { DEFAULT_TOOLFORMER_TAU } from './filter.ts';
import { addShard, deltaHistogramSvg, emptyReport, type RunReport } from './run-report.ts';
import { SHARD_PROGRAM_MARK, type ShardOutput } from './shard-program.ts';

/** The first line of a run's summary program, which returns the whole run's report. */
export const RUN_REPORT_MARK = '// codecall toolformer: run report\n';
export const HISTOGRAM_ARTIFACT = 'delta-histogram.svg';
export const REPORT_ARTIFACT = 'report.json';

/** A run's report with what the CLI adds (corpus lines that were not texts, the shard count). */
export type RunSummary = RunReport & { readonly bad_lines?: number; readonly shards?: number };

/**
 * The program of a run's summary task: it returns the run's report (counts per tool and the histogram's bins,
 * a few KB), so the run is one task in the console whose artifacts are the whole run's report and histogram.
 */
export function runReportProgram(summary: RunSummary): string {
  return `${RUN_REPORT_MARK}return ${JSON.stringify(summary)};\n`;
}

/** The report (JSON) and the delta L histogram (SVG) as a task's artifacts. */
export function reportArtifacts(report: RunSummary): WorkspaceFile[] {
  const encoder = new TextEncoder();
  return [
    { name: HISTOGRAM_ARTIFACT, data: encoder.encode(deltaHistogramSvg(report)) },
    { name: REPORT_ARTIFACT, data: encoder.encode(`${JSON.stringify(report, null, 2)}\n`) },
  ];
}

/**
 * A driver that, when a Toolformer shard's or run report's program succeeds, adds the report and its histogram
 * to the run's result as artifacts: the store keeps them with the task (fenced like any run's), the API serves
 * them and the console shows the SVG. A JavaScript program has no working directory to leave files in, and the
 * report is a pure function of the program's result, so a replayed run leaves the same bytes.
 */
export function withReportArtifacts(driver: SandboxDriver): SandboxDriver {
  return {
    name: driver.name,
    apiVersion: driver.apiVersion,
    engine: driver.engine,
    languages: driver.languages,
    ...(driver.supportsReplayScript === undefined
      ? {}
      : { supportsReplayScript: driver.supportsReplayScript }),
    ready: () => driver.ready(),
    close: () => driver.close(),
    async execute(request, options) {
      const result = await driver.execute(request, options);
      if (result.status !== 'succeeded') return result;
      const report = reportOfProgram(request.code, result.value);
      if (report === null) return result;
      return { ...result, artifacts: [...(result.artifacts ?? []), ...reportArtifacts(report)] };
    },
  };
}

/** The report a marked program's result stands for, or null (another program, or a result of another shape). */
export function reportOfProgram(code: string, value: unknown): RunSummary | null {
  if (code.startsWith(SHARD_PROGRAM_MARK) && isShardOutput(value)) {
    const report = emptyReport(value.tau ?? DEFAULT_TOOLFORMER_TAU);
    addShard(report, value);
    return report;
  }
  if (code.startsWith(RUN_REPORT_MARK) && isRunReport(value)) return value;
  return null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function isShardOutput(v: unknown): v is ShardOutput & { tau?: number } {
  return (
    isRecord(v) &&
    typeof v.lines === 'number' &&
    isRecord(v.counts) &&
    Object.values(v.counts).every(isCounts) &&
    Array.isArray(v.deltas) &&
    v.deltas.every(
      (d) =>
        Array.isArray(d) && d.length === 2 && typeof d[0] === 'string' && Number.isFinite(d[1] as number),
    ) &&
    (v.tau === undefined || Number.isFinite(v.tau))
  );
}

function isCounts(v: unknown): boolean {
  return (
    isRecord(v) &&
    ['positions', 'sampled', 'executed', 'scored', 'kept'].every((k) => typeof v[k] === 'number') &&
    isRecord(v.dropped) &&
    Object.values(v.dropped).every((n) => typeof n === 'number')
  );
}

function isRunReport(v: unknown): v is RunSummary {
  if (!isRecord(v) || typeof v.lines !== 'number' || !isRecord(v.counts) || !isRecord(v.histogram))
    return false;
  if (!Object.values(v.counts).every(isCounts)) return false;
  const h = v.histogram;
  return (
    typeof h.from === 'number' &&
    typeof h.binWidth === 'number' &&
    h.binWidth > 0 &&
    typeof h.tau === 'number' &&
    Array.isArray(h.bins) &&
    h.bins.length <= 1000 &&
    h.bins.every((b) => Array.isArray(b) && b.length === 2 && b.every((n) => Number.isFinite(n as number)))
  );
}
