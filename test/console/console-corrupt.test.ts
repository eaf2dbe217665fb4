import { describe, expect, it } from 'vitest';
import { openForTampering } from '../store/tamper.ts';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The console in a real browser against a real service with one corrupt task (its journal's checksum edited in
// the SQLite file): the task list and the approvals inbox show the tenant's other tasks and name the corrupt one,
// and its page says it is corrupt instead of showing nothing waiting.

describe.skipIf(NO_BROWSER !== null)(
  `web console with a corrupt task${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-corrupt');

    it('lists the others, names the corrupt task in the list and the inbox, and marks its page', async () => {
      const key = await fx.key('acme');
      const submit = async (): Promise<string> =>
        (
          await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
            code: 'return await tools.pay({ to: "x", amount: 250 });',
          })
        ).task_id;
      const healthy = await submit();
      const bad = await submit();
      await expect
        .poll(
          async () =>
            (await fx.api<{ approvals: { task_id: string }[] }>(key, 'GET', '/api/v1/approvals')).approvals
              .length,
        )
        .toBe(2);
      const raw = openForTampering(fx.path);
      raw
        .prepare(
          `UPDATE journal SET checksum = printf('%064d', seq) WHERE task_id = ? AND type = 'approval_request'`,
        )
        .run(bad);
      raw.close();

      await fx.withPage('corrupt-task', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.locator(`[data-testid="task-row"][data-task-id="${healthy}"]`).waitFor();
        await page.locator(`[data-testid="corrupt-task"][data-task-id="${bad}"]`).waitFor();
        expect(await page.locator(`[data-testid="task-row"][data-task-id="${bad}"]`).count()).toBe(0);
        expect(await page.getByTestId('corrupt-notice').textContent()).toContain('CHECKPOINT_CORRUPT');

        await page.getByTestId('tab-approvals').click();
        await page.locator(`[data-testid="inbox-task"][data-task-id="${healthy}"]`).waitFor();
        await page.locator(`[data-testid="corrupt-task"][data-task-id="${bad}"]`).waitFor();
        expect(await page.locator(`[data-testid="inbox-task"][data-task-id="${bad}"]`).count()).toBe(0);

        await page.locator(`[data-testid="corrupt-task"][data-task-id="${bad}"] a`).click();
        const marked = page.getByTestId('task-corrupt');
        await marked.waitFor();
        expect(await marked.textContent()).toContain('CHECKPOINT_CORRUPT');
        expect(await marked.textContent()).toContain('checksum mismatch');
        // The page's failed reads are the API's answers, not script errors.
        expect(errors.filter((e) => !e.includes('Failed to load resource'))).toEqual([]);
      });
    });
  },
);
