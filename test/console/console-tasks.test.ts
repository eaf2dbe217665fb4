import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

/** A task row as the page's script sees it (the tests' TypeScript has no DOM library). */
type Row = { dataset: Record<string, string | undefined> };

// The console in a real browser against a real service: sign-in and sign-out, tenant isolation, the live list
// and its filters, the task controls and the security headers of the page.

describe.skipIf(NO_BROWSER !== null)(
  `web console tasks${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-tasks');
    const submit = (key: string, body: object) =>
      fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', body).then((r) => r.task_id);

    it('shows the API error for a bad key, and signing out forgets the key', async () => {
      const key = await fx.key('signin-co');
      await fx.withPage('sign-in', async (page) => {
        const res = await page.goto(`${fx.base}/`);
        // The page's own headers: strict CSP, no sniffing, no referrer, never framed.
        const headers = res?.headers() ?? {};
        expect(headers['content-security-policy']).toContain("default-src 'self'");
        expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
        expect(headers['x-content-type-options']).toBe('nosniff');
        expect(headers['referrer-policy']).toBe('no-referrer');

        await page.getByTestId('api-key').fill('cc_not_a_real_key');
        await page.getByTestId('sign-in').click();
        const error = page.getByTestId('sign-in-error');
        await error.waitFor();
        expect(await error.textContent()).toContain('UNAUTHORIZED');
        expect(await page.evaluate('sessionStorage.length')).toBe(0);

        await page.getByTestId('api-key').fill(key);
        await page.getByTestId('sign-in').click();
        await page.getByTestId('task-table').waitFor();
        // Kept for the tab: a reload stays signed in.
        await page.reload();
        await page.getByTestId('task-table').waitFor();
        await page.getByTestId('sign-out').click();
        await page.getByTestId('sign-in-form').waitFor();
        expect(await page.evaluate('sessionStorage.length')).toBe(0);
        await page.reload();
        await page.getByTestId('sign-in-form').waitFor();
      });
    });

    it("keeps tenants apart: another tenant's tasks are not in the list, the stream, the inbox or by id", async () => {
      const a = await fx.key('tenant-a');
      const b = await fx.key('tenant-b');
      const hidden = await submit(a, { code: 'return await tools.pay({ to: "a", amount: 500 });' });
      await fx.withPage('tenant-isolation', async (page) => {
        await signIn(page, fx.base, b);
        await page.getByTestId('live-state').filter({ hasText: 'live' }).waitFor();
        // B's own task shows up live; one of A's submitted meanwhile never does.
        const mine = await submit(b, { code: 'return 7;' });
        const theirs = await submit(a, { code: 'return 8;' });
        await page
          .locator(`[data-testid="task-row"][data-task-id="${mine}"][data-status="succeeded"]`)
          .waitFor();
        const ids = await page
          .getByTestId('task-row')
          .evaluateAll((rows: Row[]) => rows.map((r) => r.dataset.taskId));
        expect(ids).not.toContain(hidden);
        expect(ids).not.toContain(theirs);
        // Search by A's id finds nothing; its page is NOT_FOUND; B's inbox is empty though A's task waits.
        await page.getByTestId('search').fill(hidden);
        await page.getByTestId('no-tasks').waitFor();
        await page.goto(`${fx.base}/#/tasks/${hidden}`);
        expect(await page.getByTestId('error').textContent()).toContain('NOT_FOUND');
        await page.getByTestId('tab-approvals').click();
        await page.getByTestId('inbox-empty').waitFor();
      });
      // A sees its own (the task does wait for approval).
      const inbox = await fx.api<{ approvals: { task_id: string }[] }>(a, 'GET', '/api/v1/approvals');
      expect(inbox.approvals.map((x) => x.task_id)).toContain(hidden);
    });

    it('updates the list live, filters by status and session, and finds a task by id', async () => {
      const key = await fx.key('live-co');
      const old = await submit(key, { code: 'return "old";', session_id: 'nightly' });
      await fx.withPage('live-list', async (page) => {
        await signIn(page, fx.base, key);
        await page.locator(`[data-testid="task-row"][data-task-id="${old}"]`).waitFor();
        await page.getByTestId('live-state').filter({ hasText: 'live' }).waitFor();
        // Submitted after the page loaded: it appears and moves to paused without a reload.
        const fresh = await submit(key, { code: 'return await tools.pay({ to: "z", amount: 150 });' });
        await page
          .locator(`[data-testid="task-row"][data-task-id="${fresh}"][data-status="paused"]`)
          .waitFor();
        const first = await page.getByTestId('task-row').first().getAttribute('data-task-id');
        expect(first).toBe(fresh); // newest first

        await page.getByTestId('filter-status').selectOption('paused');
        await page.locator(`[data-testid="task-row"][data-task-id="${old}"]`).waitFor({ state: 'detached' });
        expect(await page.getByTestId('task-row').count()).toBe(1);
        await page.getByTestId('filter-status').selectOption('');
        await page.getByTestId('filter-session').fill('nightly');
        await page.getByTestId('filter-session').press('Enter');
        await page
          .locator(`[data-testid="task-row"][data-task-id="${fresh}"]`)
          .waitFor({ state: 'detached' });
        expect(
          await page.getByTestId('task-row').evaluateAll((r: Row[]) => r.map((x) => x.dataset.taskId)),
        ).toEqual([old]);
        await page.getByTestId('filter-session').fill('');
        await page.getByTestId('filter-session').press('Enter');
        await page.getByTestId('search').fill(fresh.slice(-10));
        await expect
          .poll(() => page.getByTestId('task-row').evaluateAll((r: Row[]) => r.map((x) => x.dataset.taskId)))
          .toEqual([fresh]);
      });
    });

    it('pauses, resumes and cancels a running task from its page, its timeline shows the calls, and a refused submission shows the error', async () => {
      const key = await fx.key('steer-co');
      const id = await submit(key, {
        code: 'console.log("start");\nconst a = await tools.wait({ ms: 50 });\nconst b = await tools.wait({ ms: 60000 });\nreturn a + b;',
      });
      await fx.withPage('controls', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        const detail = page.getByTestId('task-detail');
        await detail.and(page.locator('[data-status="running"]')).waitFor();
        // The first call's arguments and result, live.
        const calls = page.locator('[data-testid="tool-call"][data-tool="tools.wait"]');
        await expect.poll(() => calls.count()).toBe(2);
        expect(JSON.parse((await calls.first().getByTestId('call-args').textContent()) ?? '')).toEqual({
          ms: 50,
        });
        expect(await calls.first().getByTestId('call-result').textContent()).toBe('50');

        await page.getByTestId('pause').click();
        await detail.and(page.locator('[data-status="paused"]')).waitFor();
        // A run's earlier lines are kept when it pauses (lines printed while the page watches come live).
        await expect.poll(() => page.getByTestId('logs').textContent()).toContain('start');
        expect(await detail.getByTestId('status').first().textContent()).toContain('user_request');
        await page.getByTestId('resume').click();
        await page
          .locator('[data-testid="task-detail"]:is([data-status="pending"], [data-status="running"])')
          .waitFor();
        await page.getByTestId('cancel').click();
        await detail.and(page.locator('[data-status="cancelled"]')).waitFor();
        // Ended: no control that could only fail, and a note that says so.
        await page.getByTestId('ended-note').waitFor();
        expect(await page.getByTestId('cancel').count()).toBe(0);
        await expect.poll(() => page.getByTestId('timeline').textContent()).toContain('Cancel by key:');
        expect(await page.getByTestId('timeline').textContent()).toContain('Pause by key:');
        const view = await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`);
        expect(view.status).toBe('cancelled');
        // Nothing went wrong in the page (a CSP violation would be logged); the refusal below logs its 400.
        expect(errors).toEqual([]);
        // A submission the API refuses shows its error, naming the field.
        await page.getByTestId('tab-submit').click();
        await page.getByTestId('program').fill('return 1;');
        await page.getByTestId('timeout').fill('99999999');
        await page.getByTestId('submit').click();
        const refused = page.getByTestId('submit-error');
        await refused.waitFor();
        expect(await refused.textContent()).toContain('BAD_REQUEST');
        expect(await refused.textContent()).toContain('tool_constraints.timeout_seconds');
      });
    });

    it('gives a task waiting for input its value, as JSON', async () => {
      const key = await fx.key('input-co');
      const id = await submit(key, {
        code: 'const who = await input.wait("who"); return `hello ${who.name}`;',
      });
      await fx.withPage('provide-input', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="paused"]').waitFor();
        // Not JSON: refused in the page, nothing sent.
        await page.getByTestId('input-value').fill('{name: Ada}');
        await page.getByTestId('provide-input').click();
        expect(await page.getByTestId('waiting-error').textContent()).toContain('not JSON');
        await page.getByTestId('input-value').fill('{"name": "Ada"}');
        await page.getByTestId('provide-input').click();
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(JSON.parse((await page.getByTestId('result').textContent()) ?? '')).toBe('hello Ada');
      });
    });
  },
);
