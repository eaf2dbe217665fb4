import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson, startCodecall, until } from './cli-fixture.ts';

// `codecall tasks revise ID FILE` (issue 18, ADR 0034), the built CLI as child processes: locally (--db) the
// revision runs here like `exec --db`; remotely (--url) it is created on a real `codecall serve`. The tools write
// each call that really ran to a ledger file, so the test sees across processes that nothing ran twice.

const tools = (ledger: string) => `
import { appendFileSync } from 'node:fs';
import { defineTool } from 'codecall';
const note = (tool, a) => appendFileSync(${JSON.stringify(ledger)}, JSON.stringify({ tool, a }) + '\\n');
export default [
  defineTool({ name: 'pay', description: 'pays', effect: 'unsafe', execute: (a) => { note('pay', a); return 'paid ' + a.to; } }),
  defineTool({ name: 'balance', description: 'reads', effect: 'read', execute: (a) => { note('balance', a); return 100; } }),
];
`;

const FAILS = `
const a = await tools.pay({ to: 'a' });
const b = await tools.balance({ account: 'main' });
return totl;
`;
const FIXED = `
const a = await tools.pay({ to: 'a' });
const b = await tools.balance({ account: 'main' });
const c = await tools.pay({ to: 'c' });
return [a, b, c];
`;

describe('codecall tasks revise', () => {
  let dir: string;
  const file = (name: string) => join(dir, name);
  const ledger = async (name: string): Promise<{ tool: string; a: unknown }[]> =>
    (await readFile(file(name), 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { tool: string; a: unknown });

  beforeAll(async () => {
    dir = await cliTestDir('cli-revise');
    await writeFile(file('local-tools.ts'), tools(file('local.ledger')));
    await writeFile(file('remote-tools.ts'), tools(file('remote.ledger')));
    await writeFile(file('fails.js'), FAILS);
    await writeFile(file('fixed.js'), FIXED);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('--db: creates the revision and runs it here, taking over what the failed task did', async () => {
    const db = ['--db', file('local.db')];
    const first = await codecall(
      {},
      'exec',
      file('fails.js'),
      '--tools',
      file('local-tools.ts'),
      ...db,
      '--json',
    );
    expect(first.code).toBe(1);
    const failed = lastJson(first.stdout);
    expect(failed).toMatchObject({ status: 'failed' });
    const id = String(failed.task_id);

    const r = await codecall(
      {},
      'tasks',
      'revise',
      id,
      file('fixed.js'),
      '--tools',
      file('local-tools.ts'),
      ...db,
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const view = lastJson(r.stdout);
    expect(view).toMatchObject({
      status: 'succeeded',
      result: { output: ['paid a', 100, 'paid c'] },
      progress: { tool_calls_carried: 2 },
      revision: { revision_of: id, rerun_reads: false, offered: 2, carried: 2, not_repeated: [] },
    });
    expect(r.stderr).toContain(`task ${String(view.task_id)} revises ${id}`);
    expect(r.stderr).toContain(`codecall tasks resume ${String(view.task_id)} --db ${file('local.db')}`);
    expect((await ledger('local.ledger')).map((l) => l.a)).toEqual([
      { to: 'a' },
      { account: 'main' },
      { to: 'c' },
    ]);

    const shown = await codecall({}, 'tasks', 'show', String(view.task_id), ...db);
    expect(shown.stdout).toContain(`revision:    of ${id}: 2 of 2 completed calls taken over`);
    expect(shown.stdout).not.toContain('revised by:');
    // The failed task names the task that revises it.
    const earlier = await codecall({}, 'tasks', 'show', id, ...db);
    expect(earlier.stdout).toContain(`\nrevised by:  ${String(view.task_id)}\n`);

    // An unknown task, a missing file: the error, a non-zero exit code, nothing run.
    const unknown = await codecall({}, 'tasks', 'revise', 'task_nope', file('fixed.js'), ...db);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('NOT_FOUND');
    const noFile = await codecall({}, 'tasks', 'revise', id, file('nope.js'), ...db);
    expect(noFile.stderr).toContain('program not found');
    expect(await ledger('local.ledger')).toHaveLength(3);
  });

  it("--db --tools: the revision runs with the module given and remembers it (not the revised task's)", async () => {
    await writeFile(file('tools-a.ts'), tools(file('a.ledger')));
    await writeFile(file('tools-b.ts'), tools(file('b.ledger')));
    await writeFile(file('fails-b.js'), `${FIXED.replace('return [a, b, c];', 'return nope;')}`);
    await writeFile(
      file('fixed-b.js'),
      `${FIXED.replace('return [a, b, c];', "return [c, await tools.pay({ to: 'd' })];")}`,
    );
    const db = ['--db', file('tools.db')];
    const first = await codecall(
      {},
      'exec',
      file('fails.js'),
      '--tools',
      file('tools-a.ts'),
      ...db,
      '--json',
    );
    expect(first.code).toBe(1);
    const id = String(lastJson(first.stdout).task_id);

    const r = await codecall(
      {},
      'tasks',
      'revise',
      id,
      file('fails-b.js'),
      '--tools',
      file('tools-b.ts'),
      ...db,
      '--json',
    );
    expect(r.code).toBe(1);
    const revision = String(lastJson(r.stdout).task_id);
    expect(r.stderr).toContain(
      `codecall tasks resume ${revision} --db ${file('tools.db')} --tools ${file('tools-b.ts')}`,
    );
    const shown = await codecall({}, 'tasks', 'show', revision, ...db, '--json');
    expect(lastJson(shown.stdout)).toMatchObject({ metadata: { codecall_tools_module: file('tools-b.ts') } });
    expect((await ledger('b.ledger')).map((l) => l.a)).toEqual([{ to: 'c' }]);

    // Revised again without --tools: the module remembered with the revision, B, runs its new calls.
    const again = await codecall({}, 'tasks', 'revise', revision, file('fixed-b.js'), ...db, '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(lastJson(again.stdout)).toMatchObject({
      status: 'succeeded',
      result: { output: ['paid c', 'paid d'] },
    });
    expect((await ledger('b.ledger')).map((l) => l.a)).toEqual([{ to: 'c' }, { to: 'd' }]);
    expect((await ledger('a.ledger')).map((l) => l.a)).toEqual([{ to: 'a' }, { account: 'main' }]);
  });

  it('--url: creates the revision on the service and says how to follow it', async () => {
    const server = startCodecall(
      {},
      'serve',
      '--port',
      '0',
      '--db',
      file('remote.db'),
      '--tools',
      file('remote-tools.ts'),
    );
    try {
      let url = '';
      await until(() => {
        url = /serving on (http:\/\/[^\s]+)/.exec(server.stderr())?.[1] ?? '';
        return url !== '';
      });
      const key = /^\s+(cc_\S+)$/m.exec(server.stderr())?.[1] ?? '';
      const at = ['--url', url, '--key', key];
      const sub = await codecall({}, 'tasks', 'submit', file('fails.js'), '--wait', '--json', ...at);
      expect(sub.code).toBe(1);
      const id = String(lastJson(sub.stdout).task_id);

      const r = await codecall({}, 'tasks', 'revise', id, file('fixed.js'), ...at);
      expect(r.code, r.stderr).toBe(0);
      const revised = r.stdout.trim();
      expect(revised).toMatch(/^task_/);
      expect(r.stderr).toContain(
        `task ${revised} revises ${id}; follow it with: codecall tasks watch ${revised} --url ${url}`,
      );
      const watched = await codecall({}, 'tasks', 'watch', revised, ...at);
      expect(watched.code, watched.stderr).toBe(0);
      const show = await codecall({}, 'tasks', 'show', revised, '--json', ...at);
      expect(lastJson(show.stdout)).toMatchObject({
        status: 'succeeded',
        revision: { revision_of: id, carried: 2 },
        progress: { tool_calls_carried: 2 },
      });
      expect((await ledger('remote.ledger')).map((l) => l.tool)).toEqual(['pay', 'balance', 'pay']);
      // The earlier task names its revision, in text and in JSON.
      const earlier = await codecall({}, 'tasks', 'show', id, ...at);
      expect(earlier.stdout).toContain(`\nrevised by:  ${revised}\n`);
      const earlierJson = await codecall({}, 'tasks', 'show', id, '--json', ...at);
      expect(lastJson(earlierJson.stdout)).toMatchObject({ revised_by: { task_ids: [revised], total: 1 } });

      // The service's refusals come back with their codes.
      const missing = await codecall({}, 'tasks', 'revise', 'task_nope', file('fixed.js'), ...at);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('error NOT_FOUND');
      // --tools and --actor are for the local form.
      const usage = await codecall({}, 'tasks', 'revise', id, file('fixed.js'), '--tools', 'x.ts', ...at);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--tools works with --db only');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('--db, Python: the revised program takes over the calls too (skipped without the python sandbox)', async () => {
    const { probePython } = await import('../src/sandbox/index.ts');
    const probe = await probePython();
    if (!probe.ok) {
      console.warn(`[cli-revise] python skipped: ${probe.reason}`);
      return;
    }
    await writeFile(
      file('fails.py'),
      'a = tools.pay(to="p")\nb = tools.balance(account="py")\nundefined_name\n',
    );
    await writeFile(file('fixed.py'), 'a = tools.pay(to="p")\nb = tools.balance(account="py")\n[a, b]\n');
    const db = ['--db', file('py.db')];
    const first = await codecall(
      {},
      'exec',
      file('fails.py'),
      '--tools',
      file('local-tools.ts'),
      ...db,
      '--json',
    );
    expect(first.code).toBe(1);
    const id = String(lastJson(first.stdout).task_id);
    const before = (await ledger('local.ledger')).length;
    const r = await codecall(
      {},
      'tasks',
      'revise',
      id,
      file('fixed.py'),
      '--tools',
      file('local-tools.ts'),
      ...db,
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(lastJson(r.stdout)).toMatchObject({
      status: 'succeeded',
      language: 'python',
      result: { output: ['paid p', 100] },
      progress: { tool_calls_carried: 2 },
    });
    expect(await ledger('local.ledger')).toHaveLength(before);
  });
});
