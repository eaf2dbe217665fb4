import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newApiKey } from '../../src/service/index.ts';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The Dashboard page in a real browser against a real service: tasks that complete (each after a timed tool
// call), one that fails and one that waits for approval, then the numbers the page shows, its charts' text
// equivalents, the approval's link, a live refresh, another tenant's empty view, an admin's view of both, and
// 400 px.

const overflow = (page: Page): Promise<number> =>
  page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

describe.skipIf(NO_BROWSER !== null)(
  `web console dashboard${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-dashboard');

    const statusOf = async (key: string, id: string) =>
      await fx.api<{ status: string; error: { code: string } | null }>(key, 'GET', `/api/v1/tasks/${id}`);
    const settle = async (key: string, id: string, status: string) =>
      expect.poll(async () => (await statusOf(key, id)).status, { timeout: 30_000 }).toBe(status);
    const value = (page: Page, name: string) =>
      page.getByTestId(`stat-${name}`).getByTestId('value').textContent();
    const barTotal = (page: Page) =>
      page
        .getByTestId('throughput-bar')
        .evaluateAll((bars: { getAttribute(name: string): string | null }[]) =>
          bars.reduce((n, b) => n + Number(b.getAttribute('data-total')), 0),
        );

    it('shows throughput, queue, pauses, errors, latency and the approvals waiting, and refreshes', async () => {
      const key = await fx.key('dash-co');
      const submit = async (code: string) =>
        (await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', { code })).task_id;
      const done = [
        await submit('await tools.wait({ ms: 40 }); return 1;'),
        await submit('await tools.wait({ ms: 40 }); return 2;'),
        await submit('await tools.wait({ ms: 40 }); return 3;'),
      ];
      const failed = await submit('throw new Error("boom");');
      const waiting = await submit('return await tools.pay({ to: "ACME", amount: 500 });');
      for (const id of done) await settle(key, id, 'succeeded');
      await settle(key, failed, 'failed');
      await settle(key, waiting, 'paused');
      const code = (await statusOf(key, failed)).error?.code ?? '';
      expect(code).not.toBe('');

      await fx.withPage('dashboard', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-dashboard').click();
        await page.getByTestId('dashboard').waitFor();
        await expect.poll(() => value(page, 'failed'), { timeout: 20_000 }).toBe('1');
        expect(await page.getByTestId('scope').textContent()).toContain('tenant dash-co');
        expect(await value(page, 'paused')).toBe('1');
        expect(await value(page, 'approvals')).toBe('1');
        expect(await value(page, 'pending')).toBe('0');
        expect(await value(page, 'running')).toBe('0');
        expect(Number(await value(page, 'throughput'))).toBeCloseTo(4 / 60, 2);
        // The chart: bars that add up to the tasks that ended, with a title and a description read as text.
        expect(await barTotal(page)).toBe(4);
        expect(await page.locator('#throughput-title').textContent()).toContain('3 succeeded, 1 failed');
        expect(await page.getByTestId('throughput-summary').textContent()).toContain('4 tasks ended');
        expect(await page.locator('[data-testid="throughput-chart"] svg').getAttribute('role')).toBe('img');
        // Latency: every task, and the three timed calls of tools.wait (each at least its 40 ms).
        const tools = page.getByTestId('latency-tools');
        expect(await tools.getByTestId('count').textContent()).toBe('3');
        const p50 = (await tools.getByTestId('p50').textContent()) ?? '';
        expect(Number(/^(\d+) ms$/.exec(p50)?.[1])).toBeGreaterThanOrEqual(39);
        expect(await page.getByTestId('latency-tasks').getByTestId('count').textContent()).toBe('4');
        expect(await page.getByTestId('latency-tool-tools.wait').getByTestId('count').textContent()).toBe(
          '3',
        );
        // Pauses, errors, the queue by tenant: labelled rows with their numbers in words.
        const reason = page.locator('[data-testid="pause-reasons-row"][data-key="approval_required"]');
        expect(await reason.getAttribute('data-value')).toBe('1');
        const error = page.locator(`[data-testid="error-codes-row"][data-key="${code}"]`);
        expect(await error.textContent()).toContain('1 task');
        const tenant = page.locator('[data-testid="tenants-row"][data-key="dash-co"]');
        expect(await tenant.textContent()).toContain('0 queued, 0 running, 1 paused');
        // The approval waiting, linked to its task.
        const link = page.getByTestId('approval-link');
        expect(await link.textContent()).toBe(waiting);
        await link.click();
        await page.locator(`[data-testid="task-detail"][data-task-id="${waiting}"]`).waitFor();
        await page.goBack();
        await page.getByTestId('dashboard').waitFor();

        // Live: a task that fails while the page is open shows within a few polls.
        await settle(key, await submit('throw new TypeError("again");'), 'failed');
        await expect.poll(() => value(page, 'failed'), { timeout: 30_000 }).toBe('2');
        await expect.poll(() => barTotal(page), { timeout: 30_000 }).toBe(5);

        // At 400 px nothing scrolls sideways.
        await page.setViewportSize({ width: 400, height: 800 });
        expect(await overflow(page)).toBeLessThanOrEqual(0);
        expect(errors).toEqual([]);
      });
    });

    it("shows another tenant nothing of them (its empty states), and an admin every tenant's", async () => {
      const other = await fx.key('dash-empty');
      const admin = newApiKey();
      await fx.service.store.createApiKey({ ...admin, tenant: 'ops', role: 'admin', name: 'ops' });
      await fx.withPage('dashboard-empty', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, other);
        await page.goto(`${fx.base}/#/dashboard`);
        await page.getByTestId('dashboard-empty').waitFor();
        expect(await value(page, 'failed')).toBe('0');
        await page.getByTestId('tenants-empty').waitFor();
        await page.getByTestId('pause-reasons-empty').waitFor();
        await page.getByTestId('error-codes-empty').waitFor();
        await page.getByTestId('approvals-empty').waitFor();
        expect(await page.getByTestId('throughput-bar').count()).toBe(0);
        expect(await page.getByTestId('throughput-summary').textContent()).toBe('No task ended.');
        expect(await page.getByTestId('latency-tools').getByTestId('p50').textContent()).toBe('–');
        expect(errors).toEqual([]);
      });
      await fx.withPage('dashboard-admin', async (page) => {
        await signIn(page, fx.base, admin.key);
        await page.goto(`${fx.base}/#/dashboard`);
        await expect
          .poll(() => page.getByTestId('scope').textContent(), { timeout: 20_000 })
          .toContain('every tenant');
        await page.locator('[data-testid="tenants-row"][data-key="dash-co"]').waitFor();
        await page.getByTestId('approval-link').waitFor();
      });
    });
  },
);
