import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// What the task page says of a task's result and controls in each state: an unfinished task has no result yet
// (not "null"), a failed one shows its error, a succeeded one its result (null too); an ended task offers no
// pause, resume or cancel that could only fail, and says why.

describe.skipIf(NO_BROWSER !== null)(
  `web console task states${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-task-states');

    async function submit(key: string, code: string, until?: string): Promise<string> {
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', { code });
      if (until) {
        await expect
          .poll(async () => (await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`)).status)
          .toBe(until);
      }
      return id;
    }

    it('says a paused or running task has not finished yet, never "null"', async () => {
      const key = await fx.key('states-unfinished');
      const paused = await submit(
        key,
        'console.log("asking"); return await tools.pay({ to: "x", amount: 500 });',
        'paused',
      );
      const running = await submit(key, 'return await tools.wait({ ms: 60000 });', 'running');
      await fx.withPage('unfinished-result', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${paused}`);
        await page.locator('[data-testid="task-detail"][data-status="paused"]').waitFor();
        const pending = page.getByTestId('result-pending');
        await pending.waitFor();
        expect(await pending.textContent()).toContain('Not finished yet');
        expect(await pending.textContent()).toContain('paused');
        expect(await page.getByTestId('result').count()).toBe(0);
        expect(await page.getByTestId('result-section').textContent()).not.toContain('null');
        // A paused task can still be cancelled.
        expect(await page.getByTestId('cancel').isEnabled()).toBe(true);

        await page.goto(`${fx.base}/#/tasks/${running}`);
        await page.locator('[data-testid="task-detail"][data-status="running"]').waitFor();
        expect(await page.getByTestId('result-pending').textContent()).toContain('running');
        expect(await page.getByTestId('pause').isEnabled()).toBe(true);
        await page.getByTestId('cancel').click();
        await page.locator('[data-testid="task-detail"][data-status="cancelled"]').waitFor();
        expect(errors).toEqual([]);
      });
    });

    it("shows a failed task's error (code, message, line) where its result would be", async () => {
      const key = await fx.key('states-failed');
      const id = await submit(key, 'const a = 1;\nthrow new Error("the ledger is closed");', 'failed');
      await fx.withPage('failed-result', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="failed"]').waitFor();
        const failed = page.getByTestId('result-error');
        await failed.waitFor();
        const text = (await failed.textContent()) ?? '';
        expect(text).toContain('GUEST_ERROR');
        expect(text).toContain('the ledger is closed');
        expect(text).toContain('line 2');
        expect(await page.getByTestId('result').count()).toBe(0);
        expect(await page.getByTestId('result-section').textContent()).not.toContain('null');
      });
    });

    it('shows a real null result of a succeeded task as null', async () => {
      const key = await fx.key('states-null');
      const id = await submit(key, 'return null;', 'succeeded');
      await fx.withPage('null-result', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(await page.getByTestId('result').textContent()).toBe('null');
      });
    });

    it('offers no pause, resume or cancel on an ended task, and says it ended', async () => {
      const key = await fx.key('states-ended');
      const succeeded = await submit(key, 'return 1;', 'succeeded');
      const failed = await submit(key, 'throw new Error("no");', 'failed');
      const cancelled = await submit(key, 'return await tools.wait({ ms: 60000 });', 'running');
      await fx.api(key, 'POST', `/api/v1/tasks/${cancelled}/control`, { action: 'cancel' });
      await fx.withPage('ended-controls', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        for (const [id, status] of [
          [succeeded, 'succeeded'],
          [failed, 'failed'],
          [cancelled, 'cancelled'],
        ] as const) {
          await page.goto(`${fx.base}/#/tasks/${id}`);
          await page.locator(`[data-testid="task-detail"][data-status="${status}"]`).waitFor();
          const ended = page.getByTestId('ended-note');
          await ended.waitFor();
          expect(await ended.textContent()).toContain(status);
          for (const control of ['pause', 'resume', 'cancel']) {
            expect(await page.getByTestId(control).count()).toBe(0);
          }
        }
        expect(errors).toEqual([]);
      });
    });
  },
);
