import { describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// A service that checks no keys (--insecure-no-auth): the console signs in with anything and says, on every page,
// that every visitor is admin.

describe.skipIf(NO_BROWSER !== null)(
  `the console without auth${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-no-auth', { noAuth: true });

    it('warns that every visitor is admin', async () => {
      await fx.withPage('no-auth banner', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, 'anything');
        await expect.poll(() => page.getByTestId('no-auth').isVisible()).toBe(true);
        expect(await page.getByTestId('no-auth').textContent()).toMatch(/checks no API keys/);
        expect(await page.getByTestId('tenant').textContent()).toBe('default');
        expect(errors).toEqual([]);
      });
    });
  },
);

describe.skipIf(NO_BROWSER !== null)(
  `the console with keys${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-keys');

    it('shows no such warning', async () => {
      await fx.withPage('no banner with keys', async (page) => {
        await signIn(page, fx.base, await fx.key('tenant-a'));
        expect(await page.getByTestId('no-auth').count()).toBe(0);
      });
    });
  },
);
