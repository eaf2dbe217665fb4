import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, startCodecall, until } from './cli-fixture.ts';

// What `codecall tasks ... --url` says when the command line is what is wrong: nothing answers, no codecall API at
// that address, no key or a wrong one. Real processes: a `codecall serve`, a plain HTTP server, the built CLI.

describe('codecall tasks --url: hints that name the URL and the next step', () => {
  let dir: string;
  let server: ReturnType<typeof startCodecall>;
  let url = '';
  let key = '';
  beforeAll(async () => {
    dir = await cliTestDir('cli-remote-hints');
    server = startCodecall({}, 'serve', '--port', '0', '--db', join(dir, 'tasks.db'));
    await until(() => {
      url = /serving on (http:\/\/[^\s]+)/.exec(server.stderr())?.[1] ?? '';
      return url !== '';
    });
    key = /^\s+(cc_\S+)$/m.exec(server.stderr())?.[1] ?? '';
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('nothing answering: names the URL and `codecall serve` with its default port', async () => {
    const r = await codecall({}, 'tasks', 'list', '--url', 'http://127.0.0.1:9', '--key', 'k');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error SERVICE_UNREACHABLE: cannot reach http:\/\/127\.0\.0\.1:9/m);
    expect(r.stderr).toContain(
      'hint: nothing answers at http://127.0.0.1:9: start a service with `codecall serve --db PATH --tools MODULE (it listens on http://127.0.0.1:8484 by default)`, or give its address with --url (or CODECALL_URL)',
    );
  });

  it('a --url that is not an http(s) URL: exit 2, with what one looks like', async () => {
    for (const bad of ['127.0.0.1:8484', 'localhost:8484']) {
      const r = await codecall({}, 'tasks', 'list', '--url', bad, '--key', 'k');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`: ${bad} (a service address such as http://127.0.0.1:8484)`);
    }
  });

  it('no key, a wrong key: exit 2, and how to pass or make one', async () => {
    const none = await codecall({}, 'tasks', 'list', '--url', url);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`hint: ${url} needs an API key: pass --key KEY or set CODECALL_KEY`);
    const wrong = await codecall({}, 'tasks', 'list', '--url', url, '--key', 'cc_wrong');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`hint: ${url} does not know this key: check --key (or CODECALL_KEY)`);
    const right = await codecall({}, 'tasks', 'list', '--url', url, '--key', key);
    expect(right.code, right.stderr).toBe(0);
    expect(right.stderr).not.toContain('hint:');
  });

  it('a URL with no codecall API behind it (a wrong path, another server) is told apart from a missing task', async () => {
    const path = `${url}/codecall`;
    const wrongPath = await codecall({}, 'tasks', 'list', '--url', path, '--key', key);
    expect(wrongPath.code).toBe(1);
    expect(wrongPath.stderr).toContain(
      `hint: ${path} has no codecall API (no route GET /codecall/api/v1/tasks`,
    );
    expect(wrongPath.stderr).toContain('e.g. --url http://127.0.0.1:8484');

    const other = createServer((_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>nope</h1>'),
    );
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const r = await codecall({}, 'tasks', 'show', 'task_x', '--url', otherUrl, '--key', key);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`hint: ${otherUrl} has no codecall API (HTTP 404 Not Found)`);
    } finally {
      other.close();
    }

    const missing = await codecall({}, 'tasks', 'show', 'task_nope', '--url', url, '--key', key);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error NOT_FOUND: no task task_nope');
    expect(missing.stderr).not.toContain('hint:');
  });
});
