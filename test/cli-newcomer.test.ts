import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, cliTestDir, codecall, lastJson, root } from './cli-fixture.ts';

// Issue 19, the newcomer's first hour: what a first `npm start`, `codecall exec` or `... | head` meets, each
// through the built CLI as a child process.

/** A node stack frame, as an uncaught error prints it. */
const STACK = /^\s+at /m;

describe('codecall in the first hour (the built CLI, as child processes)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-newcomer');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const r = await codecall({}, '--version');
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect((await codecall({}, '-V')).stdout).toBe(`${version}\n`);
  });

  it('refuses a program file of an unknown extension as a usage error naming the known ones', async () => {
    const file = join(dir, 'hello.rb');
    // Valid JavaScript: before, it ran as such.
    await writeFile(file, 'return 42;\n');
    const r = await codecall({}, 'exec', file);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      'error INVALID_ARGUMENT: cannot tell the language of hello.rb: a program file ends in .js, .mjs, .cjs, .ts, .mts, .cts or .py',
    );
    const asJs = join(dir, 'hello.mjs');
    await writeFile(asJs, 'return 42;\n');
    expect(await codecall({}, 'exec', asJs, '--json')).toMatchObject({ code: 0 });
  });

  describe('a second server on a taken port', () => {
    let holder: Server;
    let port = 0;
    beforeAll(async () => {
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      port = (holder.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

    it('says in one line that host:port is taken and how to choose another, exit 2, no stack', async () => {
      const r = await codecall(
        { CODECALL_PORT: '', CODECALL_HOST: '' },
        'serve',
        '--port',
        String(port),
        '--db',
        join(dir, 'serve.db'),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(STACK);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `error PORT_IN_USE: port 127.0.0.1:${port} is taken (another codecall serve on it?): stop that server ` +
          'or choose another port with --port N, CODECALL_PORT=N or "port" in the config file (0 picks a free one)',
      );
    });

    it('the port from CODECALL_PORT, as `npm start` takes it, gets the same line', async () => {
      const r = await codecall(
        { CODECALL_PORT: String(port), CODECALL_DB: join(dir, 'serve.db') },
        'serve',
        '--tools',
        'examples/tools.ts',
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^error PORT_IN_USE: port 127\\.0\\.0\\.1:${port} is taken`));
      expect(r.stderr).not.toMatch(STACK);
    });

    it('a host name that does not resolve is one INVALID_CONFIG line too, not a DNS stack trace', async () => {
      const r = await codecall(
        {},
        'serve',
        '--port',
        '0',
        '--host',
        'no-such-host.invalid',
        '--db',
        join(dir, 'serve.db'),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr.trim()).toMatch(
        /^error INVALID_CONFIG: cannot listen on no-such-host\.invalid:0: the host name no-such-host\.invalid does not resolve \(E[A-Z_]+\); give --host \(CODECALL_HOST\) an address of this machine, e\.g\. 127\.0\.0\.1$/,
      );
    });
  });

  it('a reader that closes early (`tasks show --journal | head -1`) ends the command quietly, status 0', async () => {
    const db = join(dir, 'journal.db');
    const program = join(dir, 'many.js');
    // 500 tool calls: over 1,000 journal lines, far more than a pipe holds.
    await writeFile(
      program,
      'for (let i = 0; i < 500; i++) await tools.convert_temperature({ celsius: i });\nreturn 1;\n',
    );
    const made = await codecall({}, 'exec', program, '--tools', 'examples/tools.ts', '--db', db, '--json');
    expect(made.code).toBe(0);
    const taskId = String(lastJson(made.stdout).task_id);

    const child = spawn(process.execPath, [bin, 'tasks', 'show', taskId, '--db', db, '--journal'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Like `head -1`: read up to the first line, then close the pipe.
    const first = await new Promise<string>((resolve) => {
      let text = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('\n')) {
          child.stdout.destroy();
          resolve(text.slice(0, text.indexOf('\n')));
        }
      });
    });
    expect(first).toBe(`id:          ${taskId}`);
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(STACK);
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).toBe('');
  });

  it('serve --help names the default port, which is not a local model server default', async () => {
    const r = await codecall({}, 'serve', '--help');
    expect(r.stdout).toMatch(/--port <n>\s+TCP port, 0 for any free one \(default 8484\)/);
  });
});
