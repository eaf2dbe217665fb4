import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The console in a real browser (Chromium, headless) against a real service: a task that needs approval is
// submitted through the form, pauses, is approved in the inbox and succeeds; rejections reach the program as
// TOOL_REJECTED; the requests of one Promise.all are approved at once.

describe.skipIf(NO_BROWSER !== null)(
  `web console approvals${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-approval');

    it('submits a task that needs approval, sees it pause, approves it in the inbox and sees it succeed', async () => {
      const key = await fx.key('acme');
      await fx.withPage('approve-in-inbox', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await expect.poll(() => page.getByTestId('tenant').textContent()).toBe('acme');
        await page.getByTestId('tab-submit').click();
        await page
          .getByTestId('program')
          .fill('const receipt = await tools.pay({ to: "ACME Corp", amount: 250 });\nreturn { receipt };');
        await page.getByTestId('session').fill('billing-1');
        await page.getByTestId('timeout').fill('20');
        await page.getByTestId('submit').click();

        // The form leads to the task, which pauses for the approval.
        const detail = page.getByTestId('task-detail');
        await detail.and(page.locator('[data-status="paused"]')).waitFor();
        const id = (await detail.getAttribute('data-task-id')) ?? '';
        expect(id).toMatch(/^task_/);
        await expect
          .poll(() => detail.getByTestId('status').first().textContent())
          .toContain('approval_required');
        expect(await page.getByTestId('code').textContent()).toContain('tools.pay');
        expect(await page.getByTestId('code').locator('.tok-keyword').first().textContent()).toBe('const');

        // In the list, paused; in the inbox, with the exact arguments.
        await page.getByTestId('tab-tasks').click();
        await page.locator(`[data-testid="task-row"][data-task-id="${id}"][data-status="paused"]`).waitFor();
        await page.getByTestId('tab-approvals').click();
        const inbox = page.locator(`[data-testid="inbox-task"][data-task-id="${id}"]`);
        await inbox.waitFor();
        expect(await inbox.getByTestId('approval-tool').textContent()).toBe('tools.pay');
        expect(JSON.parse((await inbox.getByTestId('approval-args').textContent()) ?? '')).toEqual({
          to: 'ACME Corp',
          amount: 250,
        });
        await inbox.getByTestId('approve').click();
        await inbox.waitFor({ state: 'detached' });

        // The task goes on and succeeds, with its result and the call in the timeline.
        await page.getByTestId('tab-tasks').click();
        await page
          .locator(`[data-testid="task-row"][data-task-id="${id}"][data-status="succeeded"]`)
          .waitFor();
        await page.locator(`[data-testid="task-row"][data-task-id="${id}"] a`).click();
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(JSON.parse((await page.getByTestId('result').textContent()) ?? '')).toEqual({
          receipt: 'paid 250 to ACME Corp',
        });
        const call = page.locator('[data-testid="tool-call"][data-tool="tools.pay"]');
        await call.getByTestId('call-result').waitFor();
        expect(JSON.parse((await call.getByTestId('call-args').textContent()) ?? '')).toEqual({
          to: 'ACME Corp',
          amount: 250,
        });
        expect(await call.getByTestId('call-result').textContent()).toContain('paid 250 to ACME Corp');
        await expect.poll(() => page.getByTestId('tl-decision').first().textContent()).toContain('Approved');
        expect(await page.getByTestId('resources').textContent()).toContain('Tool calls');
        expect(errors).toEqual([]);
      });
    });

    it('rejects with a reason, and the program sees TOOL_REJECTED with it', async () => {
      const key = await fx.key('reject-co');
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: 'try { await tools.pay({ to: "x", amount: 900 }); return "paid"; } catch (e) { return { code: e.code, message: e.message }; }',
      });
      await fx.withPage('reject-with-reason', async (page) => {
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-approvals').click();
        const inbox = page.locator(`[data-testid="inbox-task"][data-task-id="${id}"]`);
        await inbox.waitFor();
        await inbox.getByTestId('reason').fill('over budget');
        await inbox.getByTestId('reject').click();
        await inbox.waitFor({ state: 'detached' });
        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        const result = JSON.parse((await page.getByTestId('result').textContent()) ?? '') as {
          code: string;
          message: string;
        };
        expect(result.code).toBe('TOOL_REJECTED');
        expect(result.message).toContain('over budget');
        await expect
          .poll(() => page.getByTestId('tl-decision').first().textContent())
          .toContain('over budget');
      });
    });

    it("approves all of one Promise.all's requests at once", async () => {
      const key = await fx.key('batch-co');
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: 'return await Promise.all([1, 2, 3].map((i) => tools.pay({ to: `v${i}`, amount: 100 + i })));',
      });
      await fx.withPage('approve-all', async (page) => {
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-approvals').click();
        const inbox = page.locator(`[data-testid="inbox-task"][data-task-id="${id}"]`);
        await expect.poll(() => inbox.getByTestId('approval').count()).toBe(3);
        const args = await inbox.getByTestId('approval-args').allTextContents();
        expect(args.map((a) => JSON.parse(a) as unknown)).toEqual(
          [1, 2, 3].map((i) => ({ to: `v${i}`, amount: 100 + i })),
        );
        await inbox.getByTestId('approve-all').click();
        await inbox.waitFor({ state: 'detached' });
        await expect.poll(() => page.getByTestId('inbox-empty').isVisible()).toBe(true);
      });
      const done = await fx.api<{ status: string; result: { output: unknown } }>(
        key,
        'GET',
        `/api/v1/tasks/${id}`,
      );
      await expect
        .poll(async () => (await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`)).status)
        .toBe('succeeded');
      void done;
      const view = await fx.api<{ result: { output: unknown } }>(key, 'GET', `/api/v1/tasks/${id}`);
      expect(view.result.output).toEqual(['paid 101 to v1', 'paid 102 to v2', 'paid 103 to v3']);
      // One decision per request, all journaled in one go.
      const { events } = await fx.api<{ events: { type: string; seq: number }[] }>(
        key,
        'GET',
        `/api/v1/tasks/${id}/events?limit=1000`,
      );
      const decisions = events.filter((e) => e.type === 'approval_decision').map((e) => e.seq);
      expect(decisions).toHaveLength(3);
      expect(decisions[2]! - decisions[0]!).toBe(2);
    });
  },
);

describe.skipIf(NO_BROWSER !== null)(
  `web console approval expiry${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-approval-expiry', { flags: { approvalTtlSeconds: '3600' } });

    it('shows in the inbox when each request expires (approvalTtlSeconds)', async () => {
      const key = await fx.key('acme');
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: 'return await tools.pay({ to: "ACME Corp", amount: 250 });',
      });
      const inboxItem = async () =>
        (
          await fx.api<{ approvals: { task_id: string; expires_at: string | null }[] }>(
            key,
            'GET',
            '/api/v1/approvals',
          )
        ).approvals.find((a) => a.task_id === id);
      await expect.poll(inboxItem, { timeout: 30_000 }).toBeDefined();
      const expiresAt = Date.parse((await inboxItem())?.expires_at ?? '');
      // About an hour from the request (the request was made a moment ago).
      expect(expiresAt - Date.now()).toBeGreaterThan(3000_000);
      expect(expiresAt - Date.now()).toBeLessThanOrEqual(3600_000);
      await fx.withPage('inbox-expiry', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-approvals').click();
        const inbox = page.locator(`[data-testid="inbox-task"][data-task-id="${id}"]`);
        await inbox.waitFor();
        expect(await inbox.getByTestId('approval-expires').textContent()).toContain(
          new Date(expiresAt).toLocaleString('en-US', { year: 'numeric' }),
        );
        expect(errors).toEqual([]);
      });
    });
  },
);
