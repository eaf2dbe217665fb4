// fetch in the console (issue 21): a task submitted from the form with the hosts its fetch may reach shows them,
// and its timeline shows each request by method and URL with the response's status and text, never base64.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

describe.skipIf(NO_BROWSER !== null)(
  `web console, fetch${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-fetch', { flags: { egressAllowPrivate: true } });
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((_req, res) => {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"greeting":"hello from the server"}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('submits with network hosts, shows them, and shows the request and its response as text', async () => {
      const key = await fx.key('fetcher');
      await fx.withPage('fetch', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-submit').click();
        await page
          .getByTestId('program')
          .fill(`const r = await fetch('http://127.0.0.1:${port}/hello'); return (await r.json()).greeting;`);
        await page.getByTestId('network').fill(`127.0.0.1:${port}`);
        await page.getByTestId('submit').click();
        const detail = page.locator(
          '[data-testid="task-detail"][data-status="failed"], [data-testid="task-detail"][data-status="succeeded"]',
        );
        await detail.waitFor();
        // http is not allowed from the form: the request is refused, and the refusal is shown as such.
        expect(await page.getByTestId('network-access').textContent()).toContain(`127.0.0.1:${port}`);
        const call = page.getByTestId('tl-tool').first();
        expect(await call.textContent()).toContain(`fetch GET http://127.0.0.1:${port}/hello`);
        expect(await page.getByTestId('call-result').first().textContent()).toContain('EGRESS_REFUSED');
        expect(errors).toEqual([]);
      });
    });

    it('shows a response body as text', async () => {
      const key = await fx.key('fetcher-2');
      const { task_id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        code: `return (await (await fetch('http://127.0.0.1:${port}/hello')).json()).greeting;`,
        tool_constraints: { network_access: { allow: [`127.0.0.1:${port}`], allow_http: true } },
      });
      await fx.withPage('fetch-body', async (page) => {
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${task_id}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        const result = await page.getByTestId('call-result').first().textContent();
        expect(result).toContain('hello from the server');
        expect(result).toContain('"status": 200');
        expect(result).not.toContain('eyJncmVldGluZyI'); // the body's base64
      });
    });
  },
);
