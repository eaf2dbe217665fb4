import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tools/index.ts';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// Fix and continue (issue 18) in a real browser against a real service: a task that called tools and then failed
// is edited and rerun from its page; the revision takes over the calls the failed attempt completed (shown as
// carried over, linked to where they ran) and the tools' own ledger shows that none ran twice. A revised call
// that changes the world with other arguments is held, shown beside the earlier call, and run by a human; the
// earlier one is reported as already executed and not repeated.

/** Every time a tool really ran, as `tool:arguments` (the outside world's record, not the journal's). */
const ledger: string[] = [];
const ran = (entry: string): number => ledger.filter((e) => e === entry).length;

const tools = [
  defineTool({
    name: 'lookup',
    description: 'The price of a SKU.',
    input: z.object({ sku: z.string() }),
    effect: 'read',
    execute: ({ sku }: { sku: string }) => {
      ledger.push(`lookup:${sku}`);
      return sku.length * 10;
    },
  }),
  defineTool({
    name: 'charge',
    description: 'Charges an amount.',
    input: z.object({ to: z.string(), amount: z.number() }),
    effect: 'unsafe',
    execute: ({ to, amount }: { to: string; amount: number }) => {
      ledger.push(`charge:${to}:${amount}`);
      return `charged ${amount} to ${to}`;
    },
  }),
];

/** The task the page shows once it is another than `than` (after a revision was sent). */
async function shownTaskOtherThan(page: Page, than: string): Promise<string> {
  const detail = page.getByTestId('task-detail');
  await expect.poll(() => detail.getAttribute('data-task-id')).not.toBe(than);
  return (await detail.getAttribute('data-task-id')) ?? '';
}

describe.skipIf(NO_BROWSER !== null)(
  `web console revisions${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    // A small code ceiling (2 KiB), so the browser can send a revision the server refuses.
    const fx = useConsoleFixture('console-revise', { tools, flags: { maxCodeBytes: '2048' } });
    const submit = (key: string, body: object) =>
      fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', body).then((r) => r.task_id);
    // The route comes from the server's side of issue 18: until this branch has it, these tests say so and skip.
    const noRevise = async (key: string): Promise<string | undefined> => {
      const doc = await fx.api<{ paths: Record<string, unknown> }>(key, 'GET', '/api/v1/openapi.json');
      return Object.keys(doc.paths).some((p) => p.endsWith('/revise'))
        ? undefined
        : 'the server has no POST /api/v1/tasks/{id}/revise yet (issue 18, server side)';
    };

    it('edits a failed task and reruns it: the calls it completed are carried over, not run again', async (ctx) => {
      const key = await fx.key('revise-co');
      const skip = await noRevise(key);
      if (skip) return ctx.skip(skip);
      const broken = [
        'const price = await tools.lookup({ sku: "A1" });',
        'const receipt = await tools.charge({ to: "ACME", amount: price });',
        'return reciept.toUpperCase();',
      ].join('\n');
      const first = await submit(key, { code: broken });
      await fx.withPage('edit-and-rerun', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${first}`);
        await page.locator('[data-testid="task-detail"][data-status="failed"]').waitFor();
        expect(ledger).toEqual(['lookup:A1', 'charge:ACME:20']);
        // Not a revision itself: no banner.
        expect(await page.getByTestId('revision').count()).toBe(0);

        // The editor opens with the task's program; the fix is typed in and sent as a revision.
        await page.getByTestId('edit-rerun').click();
        expect(await page.getByTestId('edit-rerun').getAttribute('aria-expanded')).toBe('true');
        const editor = page.getByTestId('revise-code');
        expect(await editor.inputValue()).toBe(broken);
        expect(await page.getByTestId('rerun-reads').isChecked()).toBe(false);
        await editor.fill(
          [
            'const price = await tools.lookup({ sku: "A1" });',
            'const receipt = await tools.charge({ to: "ACME", amount: price });',
            'const other = await tools.lookup({ sku: "B22" });',
            'return [other, receipt.toUpperCase()];',
          ].join('\n'),
        );
        await page.getByTestId('revise-submit').click();

        // The page moves to the new task, which succeeds.
        const second = await shownTaskOtherThan(page, first);
        expect(second).toMatch(/^task_/);
        expect(page.url()).toContain(`#/tasks/${second}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(JSON.parse((await page.getByTestId('result').textContent()) ?? '')).toEqual([
          30,
          'CHARGED 20 TO ACME',
        ]);

        // The banner: a revision of the first task, both calls it completed carried over, nothing left out.
        const banner = page.getByTestId('revision');
        await banner.waitFor();
        expect(await banner.getByTestId('revision-of').textContent()).toBe(first);
        expect(await banner.getByTestId('revision-of').getAttribute('href')).toBe(`#/tasks/${first}`);
        expect(await banner.getAttribute('data-carried')).toBe('2');
        expect(await banner.getAttribute('data-offered')).toBe('2');
        expect(await banner.getByTestId('not-repeated').count()).toBe(0);

        // The timeline: the two carried calls marked as such and linked to where they ran; the new read live.
        const carried = page.locator('[data-testid="tool-call"][data-carried="true"]');
        await expect.poll(() => carried.count()).toBe(2);
        expect(await page.locator('.tl-carried').getByTestId('carried-badge').allTextContents()).toEqual([
          'carried over',
          'carried over',
        ]);
        const origins = carried.getByTestId('origin');
        expect(
          await origins.evaluateAll((o: { dataset: Record<string, string | undefined> }[]) =>
            o.map((x) => x.dataset.callId),
          ),
        ).toEqual(['call-1', 'call-2']);
        for (const link of await carried.getByTestId('origin-link').all()) {
          expect(await link.getAttribute('href')).toBe(`#/tasks/${first}`);
        }
        expect(JSON.parse((await carried.nth(1).getByTestId('call-args').textContent()) ?? '')).toEqual({
          to: 'ACME',
          amount: 20,
        });
        expect(await carried.nth(1).getByTestId('call-result').textContent()).toContain('charged 20 to ACME');
        const live = page.locator('[data-testid="tool-call"]:not([data-carried])');
        expect(await live.count()).toBe(1);
        expect(JSON.parse((await live.getByTestId('call-args').textContent()) ?? '')).toEqual({ sku: 'B22' });

        // Nothing ran twice: the tools' ledger has each call once; the view counts the carried ones.
        expect(ledger).toEqual(['lookup:A1', 'charge:ACME:20', 'lookup:B22']);
        expect(ran('charge:ACME:20')).toBe(1);
        const view = await fx.api<{
          progress: { tool_calls_carried: number };
          revision: { revision_of: string; carried: number } | null;
        }>(key, 'GET', `/api/v1/tasks/${second}`);
        expect(view.progress.tool_calls_carried).toBe(2);
        expect(view.revision?.revision_of).toBe(first);

        // The link leads back to the attempt where the calls ran, whose page now links to its revision.
        await carried.first().getByTestId('origin-link').click();
        await page
          .locator(`[data-testid="task-detail"][data-task-id="${first}"][data-status="failed"]`)
          .waitFor();
        const revisedBy = page.getByTestId('revised-by');
        await revisedBy.waitFor();
        expect(await revisedBy.getAttribute('data-total')).toBe('1');
        const links = revisedBy.getByTestId('revised-by-link');
        expect(await links.count()).toBe(1);
        expect(await links.textContent()).toBe(second);
        expect(await links.getAttribute('href')).toBe(`#/tasks/${second}`);
        expect(await page.getByTestId('revision').count()).toBe(0);
        // ... and leads there.
        await links.click();
        await page
          .locator(`[data-testid="task-detail"][data-task-id="${second}"][data-status="succeeded"]`)
          .waitFor();
        expect(await page.getByTestId('revised-by').count()).toBe(0);
        expect(errors).toEqual([]);
      });
    });

    it('holds a revised charge beside the earlier one, runs it when told, and reports the earlier one as not repeated', async (ctx) => {
      const key = await fx.key('held-co');
      const skip = await noRevise(key);
      if (skip) return ctx.skip(skip);
      // Hostile text in the program and in the arguments: shown as text, never as markup.
      const to = '<img src=x onerror=window.__xss=1>';
      const first = await submit(key, {
        code: `await tools.charge({ to: ${JSON.stringify(to)}, amount: 5 });\nreturn missing.value;`,
      });
      await fx.withPage('held-revision', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${first}`);
        await page.locator('[data-testid="task-detail"][data-status="failed"]').waitFor();
        await page.getByTestId('edit-rerun').click();
        const editor = page.getByTestId('revise-code');
        expect(await editor.inputValue()).toContain(to);
        await editor.fill(`await tools.charge({ to: ${JSON.stringify(to)}, amount: 6 });\nreturn "done";`);
        await page.getByTestId('revise-submit').click();

        // The changed charge waits for a human, shown beside the one the failed attempt made.
        const second = await shownTaskOtherThan(page, first);
        await page.locator('[data-testid="task-detail"][data-status="paused"]').waitFor();
        const pair = page.locator('[data-testid="attention-call"][data-revised="true"]');
        await pair.waitFor();
        expect(await page.getByTestId('attention').textContent()).toContain('an earlier attempt already');
        expect(JSON.parse((await pair.getByTestId('attention-args').textContent()) ?? '')).toEqual({
          to,
          amount: 6,
        });
        expect(JSON.parse((await pair.getByTestId('attention-earlier-args').textContent()) ?? '')).toEqual({
          to,
          amount: 5,
        });
        expect(await pair.getByTestId('origin-link').getAttribute('href')).toBe(`#/tasks/${first}`);
        expect(ran(`charge:${to}:6`)).toBe(0);

        await page.getByTestId('attention-retry').click();
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(ledger.filter((e) => e.startsWith('charge:<img'))).toEqual([
          `charge:${to}:5`,
          `charge:${to}:6`,
        ]);

        // The earlier charge was not made again: the banner says so, with its arguments and where it ran.
        const banner = page.getByTestId('revision');
        await expect.poll(() => banner.getByTestId('not-repeated-call').count()).toBe(1);
        const item = banner.getByTestId('not-repeated-call');
        expect(await item.getAttribute('data-tool')).toBe('tools.charge');
        expect(await item.textContent()).toContain('"amount": 5');
        expect(await item.getByTestId('origin-link').textContent()).toBe(first);
        expect(await banner.getAttribute('data-carried')).toBe('0');
        expect(await page.locator('[data-testid="tool-call"][data-carried="true"]').count()).toBe(0);
        expect(await page.getByTestId('timeline').textContent()).toContain('Held call-1 for a human');

        // The hostile text is text: in the code, the arguments and the banner, and nothing ran.
        expect(await page.getByTestId('code').textContent()).toContain(to);
        expect(await page.locator('img').count()).toBe(0);
        expect(await page.evaluate('window.__xss')).toBeUndefined();
        expect(second).not.toBe(first);
        expect(errors).toEqual([]);
      });
    });

    it('shows a revision the server refuses with its code and message, keeps the edited program, and sends it once fixed', async (ctx) => {
      const key = await fx.key('refused-co');
      const skip = await noRevise(key);
      if (skip) return ctx.skip(skip);
      const first = await submit(key, { code: 'return missing.value;' });
      const tasks = async (): Promise<string[]> =>
        (await fx.api<{ tasks: { task_id: string }[] }>(key, 'GET', '/api/v1/tasks?limit=100')).tasks.map(
          (t) => t.task_id,
        );
      await fx.withPage('refused-revision', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${first}`);
        await page.locator('[data-testid="task-detail"][data-status="failed"]').waitFor();
        await page.getByTestId('edit-rerun').click();
        const editor = page.getByTestId('revise-code');
        // Over the service's 2 KiB ceiling on code: 413 PAYLOAD_TOO_LARGE, naming the field.
        const big = `// ${'x'.repeat(3000)}\nreturn "fixed";`;
        await editor.fill(big);
        await page.getByTestId('revise-submit').click();
        const refusal = page.getByTestId('revise-error');
        await refusal.waitFor();
        expect(await refusal.getAttribute('role')).toBe('alert');
        expect(await refusal.locator('strong').textContent()).toBe('PAYLOAD_TOO_LARGE');
        const text = (await refusal.textContent()) ?? '';
        expect(text).toContain(`code is ${Buffer.byteLength(big)} bytes; it must be at most 2048 bytes`);
        expect(text).toContain('(field code)');
        // Nothing lost, nothing made: the page, the open editor and its text are as they were; no task was created.
        expect(await page.getByTestId('task-detail').getAttribute('data-task-id')).toBe(first);
        expect(page.url()).toContain(`#/tasks/${first}`);
        expect(await editor.inputValue()).toBe(big);
        expect(await page.getByTestId('revise-submit').isEnabled()).toBe(true);
        expect(await tasks()).toEqual([first]);
        expect(await page.getByTestId('revised-by').count()).toBe(0);

        // Cut down, the same program is sent: the refusal goes, the page moves to the revision.
        await editor.fill('return "fixed";');
        await page.getByTestId('revise-submit').click();
        const second = await shownTaskOtherThan(page, first);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(JSON.parse((await page.getByTestId('result').textContent()) ?? '')).toBe('fixed');
        expect((await tasks()).sort()).toEqual([first, second].sort());
        // The browser logs the refused request itself (413); the page threw nothing and logged nothing else.
        expect(errors).toEqual([
          'Failed to load resource: the server responded with a status of 413 (Payload Too Large)',
        ]);
      });
    });

    it('offers no edit and rerun while a task runs, and does once it ended', async (ctx) => {
      const key = await fx.key('not-revisable-co');
      const skip = await noRevise(key);
      if (skip) return ctx.skip(skip);
      const running = await submit(key, { code: 'return await tools.wait({ ms: 60000 });' });
      await fx.withPage('not-revisable', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${running}`);
        await page.locator('[data-testid="task-detail"][data-status="running"]').waitFor();
        expect(await page.getByTestId('edit-rerun').count()).toBe(0);
        await page.getByTestId('cancel').click();
        await page.locator('[data-testid="task-detail"][data-status="cancelled"]').waitFor();
        // Ended (cancelled): it can be revised.
        await page.getByTestId('edit-rerun').waitFor();
      });
    });
  },
);
