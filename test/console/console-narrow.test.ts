import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The console at 400 px wide (a phone): no page scrolls sideways; wide tables scroll in their own box.

/** How far the page is wider than the window (0: it fits). */
const overflow = (page: Page): Promise<number> =>
  page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

describe.skipIf(NO_BROWSER !== null)(
  `web console at 400 px${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-narrow');

    it('fits the list, a task, the inbox and the Submit page in 400 px', async () => {
      const key = await fx.key('a-tenant-with-a-rather-long-name');
      const submit = async (body: object) =>
        (await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', body)).task_id;
      await submit({ code: 'return 1;', session_id: 'session-with-a-long-identifier-0123456789' });
      const id = await submit({
        code: 'const w = await Promise.all([tools.wait({ ms: 20 }), tools.wait({ ms: 30 })]);\nreturn await tools.pay({ to: "Someone With A Long Name Ltd", amount: 12345 });',
        session_id: 'session-with-a-long-identifier-0123456789',
      });
      await expect
        .poll(async () => (await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`)).status)
        .toBe('paused');
      await fx.withPage('narrow', async (page) => {
        const errors = watchErrors(page);
        await page.setViewportSize({ width: 400, height: 800 });
        await signIn(page, fx.base, key);
        await expect.poll(() => page.getByTestId('task-row').count()).toBe(2);
        expect(await overflow(page)).toBeLessThanOrEqual(0);

        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="paused"]').waitFor();
        await expect.poll(() => page.getByTestId('wf-call').count()).toBe(3);
        await expect.poll(() => page.getByTestId('tool-call').count()).toBe(3);
        expect(await overflow(page)).toBeLessThanOrEqual(0);

        await page.getByTestId('tab-approvals').click();
        await page.getByTestId('inbox-task').waitFor();
        expect(await overflow(page)).toBeLessThanOrEqual(0);

        await page.getByTestId('tab-submit').click();
        await page.getByTestId('submit-form').waitFor();
        await page.getByTestId('tool-list').waitFor();
        expect(await overflow(page)).toBeLessThanOrEqual(0);
        expect(errors).toEqual([]);
      });
    });
  },
);
