import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// An approval on the task page and in the inbox: the reason comes before the buttons, and a rejection needs one
// (as `codecall tasks reject` does): without it the page says so and sends nothing.

/** Whether the reason field comes before every approve and reject button of `box` (a selector list matches in
 * document order). */
async function reasonFirst(box: Locator): Promise<boolean> {
  const inOrder = box.locator('[data-testid="reason"], [data-testid^="approve"], [data-testid^="reject"]');
  const ids = await Promise.all((await inOrder.all()).map((l) => l.getAttribute('data-testid')));
  return ids.length > 1 && ids[0] === 'reason' && ids.filter((id) => id === 'reason').length === 1;
}

/** The decisions the page sends (POST .../approvals). */
function watchDecisions(page: Page): string[] {
  const sent: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().includes('/approvals')) sent.push(r.url());
  });
  return sent;
}

const REJECTABLE =
  'try { await tools.pay({ to: "x", amount: 900 }); return "paid"; } catch (e) { return e.message; }';

describe.skipIf(NO_BROWSER !== null)(
  `web console rejection reasons${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-approval-reason');

    async function pausedTask(key: string, code: string): Promise<string> {
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', { code });
      await expect
        .poll(async () => (await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`)).status)
        .toBe('paused');
      return id;
    }

    it('decides on the task page: the reason first, and no rejection without one', async () => {
      const key = await fx.key('reason-page');
      const id = await pausedTask(key, REJECTABLE);
      await fx.withPage('reason-on-task-page', async (page) => {
        const errors = watchErrors(page);
        const sent = watchDecisions(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        const box = page.getByTestId('task-approvals');
        await box.getByTestId('approval').waitFor();
        expect(await reasonFirst(box)).toBe(true);

        await box.getByTestId('reject').click();
        const required = box.getByTestId('reason-required');
        await required.waitFor();
        expect(await required.textContent()).toContain('reason');
        expect(sent).toEqual([]);
        const view = await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`);
        expect(view.status).toBe('paused');

        await box.getByTestId('reason').fill('over budget');
        await expect.poll(() => required.count()).toBe(0);
        await box.getByTestId('reject').click();
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        await expect.poll(() => page.getByTestId('result').textContent()).toContain('over budget');
        expect(sent).toHaveLength(1);
        expect(errors).toEqual([]);
      });
    });

    it('decides in the inbox: the reason first, and no rejection (one or all) without one', async () => {
      const key = await fx.key('reason-inbox');
      const id = await pausedTask(
        key,
        'return await Promise.all([1, 2].map((i) => tools.pay({ to: `v${i}`, amount: 500 }).catch((e) => e.message)));',
      );
      await fx.withPage('reason-in-inbox', async (page) => {
        const errors = watchErrors(page);
        const sent = watchDecisions(page);
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-approvals').click();
        const inbox = page.locator(`[data-testid="inbox-task"][data-task-id="${id}"]`);
        await expect.poll(() => inbox.getByTestId('approval').count()).toBe(2);
        expect(await reasonFirst(inbox)).toBe(true);

        await inbox.getByTestId('reject').first().click();
        await inbox.getByTestId('reason-required').waitFor();
        await inbox.getByTestId('reason').fill('   ');
        await inbox.getByTestId('reject-all').click();
        await inbox.getByTestId('reason-required').waitFor();
        expect(sent).toEqual([]);

        await inbox.getByTestId('reason').fill('not this quarter');
        await inbox.getByTestId('reject-all').click();
        await inbox.waitFor({ state: 'detached' });
        expect(sent).toHaveLength(1);
        await expect
          .poll(async () => (await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`)).status)
          .toBe('succeeded');
        const done = await fx.api<{ result: { output: string[] } }>(key, 'GET', `/api/v1/tasks/${id}`);
        expect(done.result.output.every((m) => m.includes('not this quarter'))).toBe(true);
        expect(errors).toEqual([]);
      });
    });
  },
);
