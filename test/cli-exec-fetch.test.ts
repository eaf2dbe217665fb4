// codecall exec with --allow-net (issue 21): the built CLI as a child process, a real HTTP server on loopback.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, codecall as codecallWith, lastJson } from './cli-fixture.ts';

const codecall = (...args: string[]) => codecallWith({}, ...args);

describe('codecall exec --allow-net', () => {
  let server: Server;
  let port = 0;
  let hits = 0;
  let dir = '';
  let program = '';
  beforeAll(async () => {
    assertBuilt();
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('pong');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    dir = await mkdtemp(join(tmpdir(), 'codecall-fetch-'));
    program = join(dir, 'ping.js');
    await writeFile(
      program,
      `try { const r = await fetch('http://127.0.0.1:${port}/ping'); return [r.status, await r.text()]; }
       catch (e) { return [e.code, e.details && e.details.reason]; }\n`,
    );
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches where it is allowed to, loopback only with --allow-private-net', async () => {
    const allow = ['--allow-net', `127.0.0.1:${port}`, '--allow-http'];
    const ok = await codecall('exec', program, ...allow, '--allow-private-net', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(lastJson(ok.stdout).result).toEqual([200, 'pong']);
    const before = hits;
    const refused = await codecall('exec', program, ...allow, '--json');
    expect(lastJson(refused.stdout).result).toEqual(['EGRESS_REFUSED', 'address']);
    const none = await codecall('exec', program, '--json');
    expect(lastJson(none.stdout).result).toEqual(['EGRESS_REFUSED', 'no_network_access']);
    // Uncaught, the refusal says which flag gives access.
    const uncaught = join(dir, 'uncaught.js');
    await writeFile(uncaught, `return (await fetch('http://127.0.0.1:${port}/ping')).status;\n`);
    const hinted = await codecall('exec', uncaught);
    expect(hinted.code).toBe(1);
    expect(hinted.stderr).toMatch(/failed: EGRESS_REFUSED: .*\nhint: .*--allow-net/);
    expect(hits).toBe(before);
  });

  it('runs as a durable task with --db, and refuses a bad --allow-net before storing anything', async () => {
    const db = join(dir, 'tasks.db');
    const stored = await codecall(
      'exec',
      program,
      '--db',
      db,
      '--allow-net',
      `127.0.0.1:${port}`,
      '--allow-http',
      '--allow-private-net',
      '--json',
    );
    expect(stored.code, stored.stderr).toBe(0);
    expect(lastJson(stored.stdout).result).toMatchObject({ output: [200, 'pong'] });
    const bad = await codecall('exec', program, '--allow-net', 'https://x.com/a');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--allow-net.*is not a host/);
    const lonely = await codecall('exec', program, '--allow-http');
    expect(lonely.stderr).toMatch(/--allow-http needs --allow-net/);
  });
});
