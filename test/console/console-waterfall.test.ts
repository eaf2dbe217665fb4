import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tools/index.ts';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The waterfall beside the timeline: each tool call a bar from its start to its end on one time axis, so the
// calls of a Promise.all overlap and sequential ones do not; with each call's name, duration and status.

const slow = (name: string) =>
  defineTool({
    name,
    description: `Waits 300 ms, then answers "${name}".`,
    input: z.object({}),
    effect: 'read',
    execute: async () => {
      await new Promise((r) => setTimeout(r, 300));
      return name;
    },
  });
const boom = defineTool({
  name: 'boom',
  description: 'Always fails.',
  input: z.object({}),
  effect: 'read',
  execute: () => {
    throw new Error('kaboom');
  },
});

interface Bar {
  readonly left: number;
  readonly right: number;
}

/** Each call's bar on the page, in the rows' order. */
async function bars(rows: Locator): Promise<Bar[]> {
  const out: Bar[] = [];
  for (const row of await rows.all()) {
    const box = await row.getByTestId('wf-bar').boundingBox();
    if (!box) throw new Error('a bar is not shown');
    out.push({ left: box.x, right: box.x + box.width });
  }
  return out;
}

describe.skipIf(NO_BROWSER !== null)(
  `web console call waterfall${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-waterfall', { tools: [slow('a'), slow('b'), slow('c'), boom] });

    async function done(key: string, code: string): Promise<string> {
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', { code });
      await expect
        .poll(async () => (await fx.api<{ status: string }>(key, 'GET', `/api/v1/tasks/${id}`)).status)
        .toBe('succeeded');
      return id;
    }

    it("shows a Promise.all's calls as overlapping bars and sequential calls one after another", async () => {
      const key = await fx.key('waterfall-co');
      const parallel = await done(key, 'return await Promise.all([tools.a(), tools.b(), tools.c()]);');
      const sequential = await done(key, 'return [await tools.a(), await tools.b(), await tools.c()];');
      await fx.withPage('waterfall', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);

        await page.goto(`${fx.base}/#/tasks/${parallel}`);
        const rows = page.getByTestId('waterfall').getByTestId('wf-call');
        await expect.poll(() => rows.count()).toBe(3);
        expect(await page.getByTestId('waterfall-summary').textContent()).toContain('3 tool calls');
        expect(await Promise.all((await rows.all()).map((r) => r.getAttribute('data-tool')))).toEqual([
          'tools.a',
          'tools.b',
          'tools.c',
        ]);
        for (const row of await rows.all()) {
          expect(await row.getAttribute('data-status')).toBe('ok');
          expect(await row.getByTestId('wf-duration').textContent()).toMatch(/^\d+ ms$/);
          expect(
            Number.parseInt((await row.getByTestId('wf-duration').textContent()) ?? '', 10),
          ).toBeGreaterThanOrEqual(250);
        }
        const together = await bars(rows);
        // Every two bars share some time: the calls ran at once.
        for (const x of together) {
          for (const y of together) expect(Math.max(x.left, y.left)).toBeLessThan(Math.min(x.right, y.right));
        }

        await page.goto(`${fx.base}/#/tasks/${sequential}`);
        await page.locator(`[data-testid="task-detail"][data-task-id="${sequential}"]`).waitFor();
        await expect.poll(() => rows.count()).toBe(3);
        const inTurn = await bars(rows);
        // Each bar starts where the one before ended (a pixel of rounding allowed), never before.
        for (let i = 1; i < inTurn.length; i++) {
          expect(inTurn[i]!.left).toBeGreaterThanOrEqual(inTurn[i - 1]!.right - 1);
        }
        expect(errors).toEqual([]);
      });
    });

    it('marks calls that failed, wait for approval, and were replayed after a resume', async () => {
      const key = await fx.key('waterfall-status-co');
      const { task_id: id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: 'try { await tools.boom(); } catch {}\nconst a = await tools.a();\nreturn [a, await tools.pay({ to: "x", amount: 500 })];',
      });
      await fx.withPage('waterfall-status', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${id}`);
        await page.locator('[data-testid="task-detail"][data-status="paused"]').waitFor();
        const row = (tool: string) => page.locator(`[data-testid="wf-call"][data-tool="tools.${tool}"]`);
        await expect.poll(() => row('pay').getAttribute('data-status')).toBe('waiting-approval');
        expect(await row('pay').textContent()).toContain('waiting approval');
        expect(await row('boom').getAttribute('data-status')).toBe('error');
        expect(await row('boom').textContent()).toContain('error');
        expect(await row('a').getAttribute('data-status')).toBe('ok');

        await fx.api(key, 'POST', `/api/v1/tasks/${id}/approvals`, { decision: 'approve' });
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        // The new run replayed the calls of the first one and ran the approved call.
        await expect.poll(() => row('pay').getAttribute('data-status')).toBe('ok');
        await expect.poll(() => row('a').getAttribute('data-status')).toBe('replayed');
        expect(await row('a').textContent()).toContain('replayed');
        expect(await row('boom').getAttribute('data-status')).toBe('error');
        expect(errors).toEqual([]);
      });
    });
  },
);
