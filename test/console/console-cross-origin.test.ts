import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastBody, rawClient } from '../http/raw-socket.ts';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// Issue 17 item 7, in a real browser: a page served from ANOTHER loopback origin tries to create tasks on a
// server without API keys (--insecure-no-auth) the ways a page can without CORS: fetch in no-cors mode (a
// multipart task form, a text/plain JSON body) and a plain HTML form POST. None creates a task. The console,
// served by that server itself, keeps working; a rebinding-style request (a foreign Host) is refused.

/** The attacker's page: every cross-site write a page may send without a CORS preflight, then `done`. */
function evilPage(target: string): string {
  const task = JSON.stringify({ code: 'return "pwned"' });
  return `<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" enctype="multipart/form-data" target="sink" action="${target}/api/v1/tasks">
  <input type="hidden" name="task" value='${task}'>
</form>
<script>
(async () => {
  const url = ${JSON.stringify(`${target}/api/v1/tasks`)};
  const results = [];
  const form = new FormData();
  form.append('task', ${JSON.stringify(task)});
  for (const init of [
    { method: 'POST', mode: 'no-cors', body: form },
    { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(task)} },
  ]) {
    try { await fetch(url, init); results.push('sent'); } catch (e) { results.push('failed: ' + e); }
  }
  const sink = document.getElementById('sink');
  await new Promise((resolve) => { sink.onload = resolve; document.getElementById('form').submit(); });
  results.push('form');
  document.title = 'done ' + results.join(',');
})();
</script></body></html>`;
}

describe.skipIf(NO_BROWSER !== null)(
  `a no-auth server and pages of other origins${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    const fx = useConsoleFixture('console-cross-origin', { noAuth: true });
    let evil: Server;
    let evilPort = 0;
    beforeAll(async () => {
      evil = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(evilPage(fx.base));
      });
      await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
      evilPort = (evil.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => (evil ? evil.close(() => resolve()) : resolve())));

    const tasks = () => fx.service.store.countTasks();
    /** CROSS_ORIGIN_REFUSED answers the server counted (its /metrics): the page's requests did reach it. */
    async function refusals(): Promise<number> {
      const text = await (await fetch(`${fx.base}/metrics`)).text();
      const line = text.split('\n').find((l) => l.includes('code="CROSS_ORIGIN_REFUSED"'));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    }

    // 127.0.0.1 on another port is the same site (another origin); localhost is another site.
    for (const host of ['127.0.0.1', 'localhost']) {
      it(`a page on http://${host}:<other port> creates no task (fetch no-cors, form POST)`, async () => {
        const before = await tasks();
        const refused = await refusals();
        await fx.withPage(`cross-origin-${host}`, async (page) => {
          await page.goto(`http://${host}:${evilPort}/`);
          await expect.poll(() => page.title(), { timeout: 20_000 }).toMatch(/^done/);
          expect(await page.title()).toBe('done sent,sent,form');
        });
        expect(await tasks()).toBe(before);
        expect(await refusals()).toBeGreaterThanOrEqual(refused + 3);
      });
    }

    it('the console, served by the server itself, still creates tasks', async () => {
      const before = await tasks();
      await fx.withPage('console-own-origin', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, 'anything');
        await page.getByTestId('tab-submit').click();
        await page.getByTestId('program').fill('return 6 * 7;');
        await page.getByTestId('submit').click();
        const detail = page.getByTestId('task-detail');
        await detail.and(page.locator('[data-status="succeeded"]')).waitFor({ timeout: 20_000 });
        expect(errors).toEqual([]);
      });
      expect(await tasks()).toBe(before + 1);
    });

    it('a rebinding-style request (Host: evil.example) is refused 421 HOST_NOT_ALLOWED', async () => {
      const before = await tasks();
      const c = await rawClient(fx.base);
      const body = JSON.stringify({ code: 'return 1' });
      c.socket.write(
        `POST /api/v1/tasks HTTP/1.1\r\nhost: evil.example:${new URL(fx.base).port}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
      const text = await c.closed;
      expect(text).toMatch(/^HTTP\/1\.1 421 /);
      expect(lastBody(text)).toMatchObject({ error: { code: 'HOST_NOT_ALLOWED' } });
      expect(await tasks()).toBe(before);
    });
  },
);
