import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The Approvals tab shows how many approvals wait, kept current from the tenant's one event stream on every page;
// counts on the pages are in words that agree with them ("1 approval", "2 approvals", "1 request").

describe.skipIf(NO_BROWSER !== null)(
  `web console approvals badge${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-inbox-badge');

    it('counts the waiting approvals on the tab, live, and says them in the singular or plural', async () => {
      const key = await fx.key('badge-co');
      await fx.withPage('inbox-badge', async (page) => {
        const errors = watchErrors(page);
        // The list, the inbox and the count share one stream of the tenant's events.
        const streams: string[] = [];
        page.on('request', (r) => {
          if (r.url().includes('/api/v1/task-events')) streams.push(r.url());
        });
        await signIn(page, fx.base, key);
        const badge = page.getByTestId('approvals-count');
        expect(await badge.count()).toBe(0);

        const submit = async (code: string) =>
          (await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', { code })).task_id;
        const one = await submit('return await tools.pay({ to: "a", amount: 500 });');
        await expect.poll(() => badge.textContent()).toBe('1');
        expect(await badge.getAttribute('title')).toBe('1 approval waits');
        const two = await submit(
          'return await Promise.all([tools.pay({ to: "b", amount: 501 }), tools.pay({ to: "c", amount: 502 })]);',
        );
        await expect.poll(() => badge.textContent()).toBe('3');
        expect(await badge.getAttribute('title')).toBe('3 approvals wait');

        // The pages' words agree with the counts.
        await page.goto(`${fx.base}/#/tasks/${one}`);
        await expect.poll(() => page.getByTestId('to-inbox').textContent()).toContain('1 approval waits');
        await page.goto(`${fx.base}/#/tasks/${two}`);
        await expect.poll(() => page.getByTestId('to-inbox').textContent()).toContain('2 approvals wait');
        await page.getByTestId('tab-approvals').click();
        const group = (id: string) => page.locator(`[data-testid="inbox-task"][data-task-id="${id}"]`);
        await expect.poll(() => group(one).getByTestId('request-count').textContent()).toBe('1 request');
        expect(await group(two).getByTestId('request-count').textContent()).toBe('2 requests');

        // Decided elsewhere (the API): the badge follows.
        await fx.api(key, 'POST', `/api/v1/tasks/${one}/approvals`, { decision: 'approve' });
        await expect.poll(() => badge.textContent()).toBe('2');
        await fx.api(key, 'POST', `/api/v1/tasks/${two}/approvals`, { decision: 'approve' });
        await expect.poll(() => badge.count()).toBe(0);
        expect(streams).toHaveLength(1);
        expect(errors).toEqual([]);
      });
    });
  },
);
