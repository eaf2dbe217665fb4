// Tool budgets in the console (ADR 0044): a task's page shows each of its budgets with what it used, and marks one
// used up.
import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

describe.skipIf(NO_BROWSER !== null)(
  `web console, tool budgets${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-budgets');

    it("shows a task's budgets and what it used, a used-up one marked", async () => {
      const key = await fx.key('budgeted');
      const { task_id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: `
          const out = [];
          for (let i = 0; i < 3; i++) {
            try { out.push(await tools.pay({ to: 'a', amount: 1 })); } catch (e) { out.push(e.code); }
          }
          return out;`,
        tool_constraints: { budgets: { max_calls: 5, tools: { 'tools.pay': { max_calls: 2 } } } },
      });
      await fx.withPage('budgets', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${task_id}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        const rows = await page.getByTestId('budget').allTextContents();
        expect(rows).toEqual(['all tools calls25', 'tools.pay calls22 (used up)']);
        expect(await page.locator('[data-testid="budget"].spent').count()).toBe(1);
        expect(errors).toEqual([]);
      });
    });
  },
);
