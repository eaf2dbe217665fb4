import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// The Submit page lists the tools the server offers (GET /api/v1/tools): name, what it does, its effect and
// whether its calls need approval; a tool's name goes into the allow-list with a click.

describe.skipIf(NO_BROWSER !== null)(
  `web console tool list${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-tools');

    it('lists the tools on the Submit page', async () => {
      const key = await fx.key('tools-co');
      await fx.withPage('tool-list', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-submit').click();
        const list = page.getByTestId('tool-list');
        await list.waitFor();
        expect(await list.getByTestId('tool-count').textContent()).toContain('2 tools');
        const pay = list.locator('[data-testid="tool"][data-name="tools.pay"]');
        const text = (await pay.textContent()) ?? '';
        expect(text).toContain('Pays an amount');
        expect(text).toContain('unsafe');
        expect(text).toContain('approval depends on the arguments');
        expect(await list.locator('[data-testid="tool"][data-name="tools.wait"]').textContent()).toContain(
          'read',
        );
        // The schema is there to read.
        await pay.locator('summary').click();
        expect(await pay.getByTestId('tool-schema').textContent()).toContain('amount');
        // A click adds the name to the allow-list (names as the program calls them: namespace.name).
        await pay.getByTestId('tool-allow').click();
        await list.locator('[data-testid="tool"][data-name="tools.wait"]').getByTestId('tool-allow').click();
        expect(await page.getByTestId('tools').inputValue()).toBe('tools.pay, tools.wait');
        expect(await pay.getByTestId('tool-allow').isDisabled()).toBe(true);
        expect(errors).toEqual([]);
      });
    });
  },
);
