import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { probePython } from '../../src/sandbox/index.ts';
import { NO_BROWSER, signIn, useConsoleFixture } from './console-fixture.ts';

// An artifact of a Python task downloaded from its page: the download goes through fetch with the key (a plain
// link could not send it) and the browser saves exactly the bytes the task wrote.

const probe = await probePython();
const why = NO_BROWSER ?? (probe.ok ? null : `the python sandbox is not available: ${probe.reason}`);

describe.skipIf(why !== null)(`web console artifacts${why ? ` (skipped: ${why})` : ''}`, () => {
  const fx = useConsoleFixture('console-artifacts', { python: true });

  it("downloads a task's artifact from its page", async () => {
    const key = await fx.key('files-co');
    const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
      language: 'python',
      code: 'open("report.txt", "w").write("rain: 49 mm\\nsun: 3 h\\n")\nprint("written")\n"ok"',
    });
    await fx.withPage('artifact-download', async (page) => {
      await signIn(page, fx.base, key);
      await page.goto(`${fx.base}/#/tasks/${id}`);
      await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor({ timeout: 20_000 });
      expect(await page.getByTestId('code').getAttribute('data-language')).toBe('python');
      expect(await page.getByTestId('logs').textContent()).toContain('written');
      const link = page.locator('[data-testid="artifact"][data-name="report.txt"]');
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      expect(download.suggestedFilename()).toBe('report.txt');
      const path = await download.path();
      expect(await readFile(path, 'utf8')).toBe('rain: 49 mm\nsun: 3 h\n');
    });
  });
});
