// A Toolformer program's result turned into the task's report and histogram artifacts, through the real QuickJS
// driver: only a marked program of the expected shape gets them, and a failed run gets none.
import { afterAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver } from '../../src/internal.ts';
import {
  emptyReport,
  HISTOGRAM_ARTIFACT,
  REPORT_ARTIFACT,
  RUN_REPORT_MARK,
  runReportProgram,
  SHARD_PROGRAM_MARK,
  withReportArtifacts,
} from '../../src/toolformer/index.ts';

const inner = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 0 });
const driver = withReportArtifacts(inner);
afterAll(() => driver.close());

const run = (code: string) =>
  driver.execute({
    code,
    language: 'javascript',
    tools: [],
    host: { call: () => Promise.reject(new Error('no host calls expected')) },
  });
const names = (r: Awaited<ReturnType<typeof run>>) => (r.artifacts ?? []).map((a) => a.name).sort();
const text = (r: Awaited<ReturnType<typeof run>>, name: string) =>
  new TextDecoder().decode(r.artifacts?.find((a) => a.name === name)?.data);

describe('Toolformer report artifacts', () => {
  it("a run report's program leaves the report and the histogram it returns", async () => {
    const report = emptyReport(1);
    report.lines = 7;
    report.counts.Calculator = {
      positions: 3,
      sampled: 3,
      executed: 2,
      scored: 2,
      kept: 1,
      dropped: { filter: 1 },
    };
    (report.histogram.bins[12] as [number, number])[1] = 1;
    (report.histogram.bins[19] as [number, number])[1] = 1;
    const r = await run(runReportProgram({ ...report, bad_lines: 1, shards: 1 }));
    expect(r.status).toBe('succeeded');
    expect(names(r)).toEqual([HISTOGRAM_ARTIFACT, REPORT_ARTIFACT].sort());
    expect(JSON.parse(text(r, REPORT_ARTIFACT))).toMatchObject({ lines: 7, bad_lines: 1, shards: 1 });
    expect(text(r, HISTOGRAM_ARTIFACT)).toContain('2 scored, 1 kept (tau = 1)');
  });

  it("a shard's program leaves its own report, its deltas in the bins and its tau marked", async () => {
    const output = {
      lines: 2,
      counts: { QA: { positions: 1, sampled: 2, executed: 2, scored: 2, kept: 1, dropped: { filter: 1 } } },
      kept: [],
      deltas: [
        ['QA', 2.4],
        ['QA', 0.1],
      ],
      tau: 0.5,
    };
    const r = await run(`${SHARD_PROGRAM_MARK}return ${JSON.stringify(output)};`);
    const report = JSON.parse(text(r, REPORT_ARTIFACT)) as {
      histogram: { tau: number; bins: [number, number][] };
    };
    expect(report.histogram.tau).toBe(0.5);
    expect(report.histogram.bins.filter(([, n]) => n > 0)).toEqual([
      [0, 1],
      [2, 1],
    ]);
  });

  it('leaves nothing for an unmarked program, a marked one of another shape, or a failed run', async () => {
    expect((await run('return { lines: 1, counts: {}, kept: [], deltas: [] };')).artifacts).toBeUndefined();
    expect((await run(`${RUN_REPORT_MARK}return { lines: "many" };`)).artifacts).toBeUndefined();
    expect(
      (await run(`${SHARD_PROGRAM_MARK}return { lines: 1, counts: {}, deltas: [["QA", "x"]] };`)).artifacts,
    ).toBeUndefined();
    const failed = await run(`${RUN_REPORT_MARK}throw new Error('no');`);
    expect(failed.status).toBe('failed');
    expect(failed.artifacts).toBeUndefined();
  });
});
