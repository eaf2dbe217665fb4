import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, startCodecall, until } from './cli-fixture.ts';

// `codecall serve` as a real process on a loopback port: tasks over HTTP, and a graceful SIGTERM that pauses a
// running task (`shutdown`) which the next start resumes.

const TOOLS = `
import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'nap',
    description: 'sleeps ms, unless aborted',
    effect: 'read',
    execute: (a, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('rested'), a.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
    }),
  }),
];
`;

describe('codecall serve', () => {
  let dir: string;
  let db: string;
  let tools: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-serve');
    db = join(dir, 'tasks.db');
    tools = join(dir, 'tools.js');
    await writeFile(tools, TOOLS);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function serve() {
    const s = startCodecall({}, 'serve', '--port', '0', '--db', db, '--tools', tools, '--insecure-no-auth');
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
      return base !== '';
    });
    return { ...s, base };
  }
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  it('serves tasks over HTTP and pauses a running one on SIGTERM; the next start resumes it', async () => {
    const first = await serve();
    const post = (body: unknown) =>
      fetch(`${first.base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const quick = await json(await post({ code: 'return 6 * 7' }));
    await until(
      async () =>
        (await json(await fetch(`${first.base}/api/v1/tasks/${String(quick.task_id)}`))).status ===
        'succeeded',
    );
    const bad = await post({ code: 42 });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { code: 'BAD_REQUEST' } });

    const slow = await json(await post({ code: 'return await tools.nap({ ms: 1500 });' }));
    const id = String(slow.task_id);
    await until(
      async () => (await json(await fetch(`${first.base}/api/v1/tasks/${id}`))).status === 'running',
    );
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const store = await createSqliteTaskStore({ path: db });
    expect(await store.getTask(id)).toMatchObject({ status: 'paused', pauseReason: 'shutdown' });
    await store.close();

    const second = await serve();
    try {
      await until(
        async () => (await json(await fetch(`${second.base}/api/v1/tasks/${id}`))).status === 'succeeded',
      );
      const done = await json(await fetch(`${second.base}/api/v1/tasks/${id}`));
      expect(done).toMatchObject({ result: { output: 'rested' }, attempts: 2 });
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
