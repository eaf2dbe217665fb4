// A Toolformer run seen in the console: `codecall toolformer run` (the built CLI, a child process) against the
// tests' bigram completions server leaves one task per shard and a summary task, each with its report and delta L
// histogram as artifacts; the service then serves that SQLite file and the console shows the histogram inline on
// the task's page, as an <img> from a blob URL (never inlined as markup), while the API serves the SVG only as a
// sandboxed download.
import { mkdtempSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, codecall, lastJson } from '../cli-fixture.ts';
import { estimateBigram } from '../toolformer/bigram-model.ts';
import { startBigramServer } from '../toolformer/bigram-completions-server.ts';
import { NO_BROWSER, signIn, useConsoleFixture } from './console-fixture.ts';

const model = estimateBigram(
  readFileSync(new URL('../toolformer/fixtures/pipeline-corpus.txt', import.meta.url), 'utf8'),
);
const dir = mkdtempSync(join(tmpdir(), 'codecall-console-toolformer-'));
const db = join(dir, 'run.db');

interface Counts {
  scored: number;
  kept: number;
}
interface Report {
  lines: number;
  counts: Record<string, Counts>;
  histogram: { bins: [number, number][] };
}

describe.skipIf(NO_BROWSER !== null)(
  `web console: a Toolformer run's histogram${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    let run: { task_id: string; counts: Record<string, Counts> };
    // Registered before the fixture's: the run's SQLite file exists when the service opens it.
    beforeAll(async () => {
      assertBuilt();
      const server = await startBigramServer(model, {
        refuseZeroMaxTokens: true,
        complete: (prompt) =>
          prompt.endsWith('(or [') ? ['Calculator(400/1400)', 'Calculator(1400/400)'] : [],
      });
      try {
        const lines = [1, 2, 3].map((day) =>
          JSON.stringify({ text: `Day ${day}. Out of 1400 participants, 400 (or 29%) passed the test.` }),
        );
        await writeFile(join(dir, 'corpus.jsonl'), `${lines.join('\n')}\n`);
        const r = await codecall(
          {},
          ...['toolformer', 'run', join(dir, 'corpus.jsonl'), '--db', db],
          ...['--tools', 'test/toolformer/fixtures/calculator-tools.ts', '--tool', 'Calculator'],
          ...['--base-url', server.baseUrl, '--model', 'bigram', '--out', join(dir, 'kept.jsonl')],
          ...['--shard-lines', '2', '--json'],
        );
        expect(r.code, r.stderr).toBe(0);
        run = lastJson(r.stdout) as typeof run;
      } finally {
        await server.close();
      }
    }, 120_000);
    const fx = useConsoleFixture('console-toolformer', { flags: { db } });

    it("keeps each shard's and the whole run's report and histogram as artifacts, served as sandboxed downloads", async () => {
      const key = await fx.key('default');
      expect(run.task_id).toMatch(/^toolformer-run-[0-9a-f]{32}$/);
      const listed = await fx.api<{ tasks: { task_id: string }[] }>(key, 'GET', '/api/v1/tasks?limit=50');
      const shards = listed.tasks.map((t) => t.task_id).filter((id) => /^toolformer-[0-9a-f]{32}$/.test(id));
      expect(shards).toHaveLength(2);
      const artifact = async (id: string, name: string) =>
        fetch(`${fx.base}/api/v1/tasks/${id}/artifacts/${name}`, {
          headers: { authorization: `Bearer ${key}` },
        });
      const reportOf = async (id: string) => (await (await artifact(id, 'report.json')).json()) as Report;

      const whole = await reportOf(run.task_id);
      expect(whole.lines).toBe(3);
      expect(whole.counts).toEqual(run.counts);
      // The shards' own reports add up to the run's.
      const parts = await Promise.all(shards.map(reportOf));
      expect(parts.map((p) => p.lines).sort()).toEqual([1, 2]);
      const sum = (f: (c: Counts) => number) =>
        parts.reduce((s, p) => s + f(p.counts.Calculator as Counts), 0);
      expect(sum((c) => c.scored)).toBe(run.counts.Calculator?.scored);
      expect(sum((c) => c.kept)).toBe(run.counts.Calculator?.kept);
      expect(whole.histogram.bins.reduce((s, [, n]) => s + n, 0)).toBe(run.counts.Calculator?.scored);

      const svg = await artifact(run.task_id, 'delta-histogram.svg');
      expect(svg.headers.get('content-type')).toBe('image/svg+xml');
      expect(svg.headers.get('content-security-policy')).toContain('sandbox');
      expect(svg.headers.get('content-disposition')).toMatch(/^attachment/);
      const text = await svg.text();
      expect(text).toContain(`${run.counts.Calculator?.scored} scored, ${run.counts.Calculator?.kept} kept`);
      expect(text).not.toMatch(/<script|href=/i);
    });

    it("shows the run's histogram on its task page as an image from a blob URL, not as markup", async () => {
      const key = await fx.key('default');
      await fx.withPage('toolformer-histogram', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${run.task_id}`);
        await page
          .locator('[data-testid="task-detail"][data-status="succeeded"]')
          .waitFor({ timeout: 20_000 });
        const img = page.locator('[data-testid="artifact-image"][data-name="delta-histogram.svg"]');
        await img.waitFor();
        expect(await img.getAttribute('src')).toMatch(/^blob:/);
        // Decoded and drawn at the SVG's own size: the browser read it as an image.
        await expect
          .poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth))
          .toBe(640);
        // The SVG's text is nowhere in the page's DOM: it was not inserted as markup.
        expect(await page.content()).not.toContain('delta L = min(L_no_call');
        // The JSON report is listed for download, and not shown as an image.
        await page.locator('[data-testid="artifact"][data-name="report.json"]').waitFor();
        expect(await page.locator('[data-testid="artifact-image"]').count()).toBe(1);
      });
    });
  },
);
