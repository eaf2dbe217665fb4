import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// Empty pages say what to do next: no tasks and no approvals lead to the Submit page; a task that made no tool
// call says so where its calls would be.

describe.skipIf(NO_BROWSER !== null)(
  `web console empty states${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-empty-states');

    it('leads from an empty task list and an empty inbox to the Submit page', async () => {
      const key = await fx.key('empty-co');
      await fx.withPage('empty-states', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        const noTasks = page.getByTestId('no-tasks');
        await noTasks.waitFor();
        await noTasks.locator('a[href="#/submit"]').click();
        await page.getByTestId('submit-form').waitFor();

        await page.getByTestId('tab-approvals').click();
        const empty = page.getByTestId('inbox-empty');
        await empty.waitFor();
        await empty.locator('a[href="#/submit"]').click();
        await page.getByTestId('submit-form').waitFor();

        // A filter that matches nothing says so, and how to widen it.
        await page.getByTestId('tab-tasks').click();
        await page.getByTestId('filter-status').selectOption('failed');
        await expect.poll(() => page.getByTestId('no-tasks').textContent()).toContain('match');
        expect(errors).toEqual([]);
      });
    });

    it('says a task made no tool calls where the waterfall would be', async () => {
      const key = await fx.key('no-calls-co');
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: 'return 42;',
      });
      await fx.withPage('no-calls', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(await page.getByTestId('waterfall-empty').textContent()).toContain('No tool calls');
      });
    });
  },
);
