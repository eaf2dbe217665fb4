import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson, startCodecall } from './cli-fixture.ts';

// The tools module lives inside the repo (test-results/ is gitignored) so `import ... from 'codecall'` resolves
// to the built package by self-reference.
const TOOLS = `
import { appendFileSync } from 'node:fs';
import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'slow',
    description: 'a slow step with a side effect',
    effect: 'unsafe',
    async execute(args) {
      const { i } = args;
      await new Promise((r) => setTimeout(r, 100));
      appendFileSync(process.env.SIDE_EFFECT_FILE, i + '\\n');
      return i * 2;
    },
  }),
];
`;

const LOOP = `
const out = [];
for (let i = 0; i < 8; i++) out.push(await tools.slow({ i }));
return out;
`;

describe('codecall exec --db and codecall tasks (the built CLI, as child processes)', () => {
  let dir: string;
  let db: string;
  let sideEffects: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await cliTestDir('cli-tasks');
    db = join(dir, 'tasks.db');
    sideEffects = join(dir, 'side-effects.txt');
    env = { SIDE_EFFECT_FILE: sideEffects };
    await writeFile(join(dir, 'tools.js'), TOOLS);
    await writeFile(join(dir, 'loop.js'), LOOP);
    await writeFile(
      join(dir, 'ok.ts'),
      'const n: number = 21;\nconsole.log("hello");\nreturn { n: n * 2 };\n',
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  let succeededId = '';
  let pausedId = '';
  let pausedForCancel = '';

  it('runs a program as a durable task and shows it from a new process', async () => {
    const r = await codecall(env, 'exec', join(dir, 'ok.ts'), '--db', db, '--json');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('hello');
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({
      status: 'succeeded',
      pause_reason: null,
      pending_approvals: [],
      result: { output: { n: 42 }, execution_log: [{ level: 'log', message: 'hello' }] },
      error: null,
    });
    expect(out.task_id).toMatch(/^task_/);
    succeededId = out.task_id as string;

    const show = await codecall(env, 'tasks', 'show', succeededId, '--db', db, '--json');
    expect(show.code).toBe(0);
    const view = lastJson(show.stdout);
    expect(view).toMatchObject({ task_id: succeededId, status: 'succeeded', result: { output: { n: 42 } } });
    const progress = view.progress as { journal_entries: number };
    expect(progress.journal_entries).toBeGreaterThan(0);
    expect(view.checkpoint_id).toBe(`${succeededId}:${progress.journal_entries}`);
  });

  it('pauses on SIGINT, then resumes from another process without repeating completed tool calls', async () => {
    const w = startCodecall(
      env,
      'exec',
      join(dir, 'loop.js'),
      '--db',
      db,
      '--tools',
      join(dir, 'tools.js'),
      '--json',
    );
    const { child, exited } = w;
    // Interrupt once a few tool calls have run.
    for (let i = 0; i < 300; i++) {
      const done = await readFile(sideEffects, 'utf8').catch(() => '');
      if (done.trim().split('\n').length >= 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const paused = lastJson(w.stdout());
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'user_request', resumable: true });
    pausedId = paused.task_id as string;
    const before = (await readFile(sideEffects, 'utf8')).trim().split('\n');
    expect(before.length).toBeLessThan(8);

    const resumed = await codecall(
      env,
      'tasks',
      'resume',
      pausedId,
      '--db',
      db,
      '--tools',
      join(dir, 'tools.js'),
      '--json',
    );
    expect(resumed.code).toBe(0);
    expect(lastJson(resumed.stdout)).toMatchObject({
      task_id: pausedId,
      status: 'succeeded',
      result: { output: [0, 2, 4, 6, 8, 10, 12, 14] },
    });
    // Every step ran exactly once across both processes.
    const calls = (await readFile(sideEffects, 'utf8')).trim().split('\n');
    expect(calls).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
  });

  it('pauses a second run on SIGINT after its first tool call (used by the cancel test)', async () => {
    const w = startCodecall(
      { SIDE_EFFECT_FILE: join(dir, 'other-side-effects.txt') },
      ...['exec', join(dir, 'loop.js'), '--db', db, '--tools', join(dir, 'tools.js'), '--json'],
    );
    const { child, exited } = w;
    for (let i = 0; i < 300 && !existsSync(join(dir, 'other-side-effects.txt')); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(w.stderr()).toContain('paus');
    const out = lastJson(w.stdout());
    expect(out).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    pausedForCancel = out.task_id as string;
  });

  it('lists tasks, filtered by status', async () => {
    await writeFile(join(dir, 'fail.js'), 'throw new Error("boom");\n');
    const failed = await codecall(env, 'exec', join(dir, 'fail.js'), '--db', db, '--json');
    expect(failed.code).toBe(1);
    expect(lastJson(failed.stdout)).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });

    const all = lastJson((await codecall(env, 'tasks', 'list', '--db', db, '--json')).stdout);
    expect((all.tasks as { task_id: string }[]).map((t) => t.task_id)).toEqual(
      expect.arrayContaining([succeededId, pausedId]),
    );
    expect(all.tasks).toHaveLength(4);
    const onlyFailed = await codecall(env, 'tasks', 'list', '--db', db, '--status', 'failed', '--json');
    const tasks = lastJson(onlyFailed.stdout).tasks as { status: string }[];
    expect(tasks).toHaveLength(1);
    expect(tasks[0]?.status).toBe('failed');
    const text = await codecall(env, 'tasks', 'list', '--db', db, '--status', 'succeeded');
    expect(text.stdout).toContain(succeededId);
    expect(text.stdout).not.toContain('failed');
  });

  it('refuses to cancel a finished task with ILLEGAL_TRANSITION and the current status, exit 2', async () => {
    const r = await codecall(env, 'tasks', 'cancel', succeededId, '--db', db);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error ILLEGAL_TRANSITION');
    expect(r.stderr).toContain('succeeded');
  });

  it('refuses to resume a succeeded task', async () => {
    const resume = await codecall(env, 'tasks', 'resume', succeededId, '--db', db);
    expect(resume.code).toBe(2);
    expect(resume.stderr).toContain('error ILLEGAL_TRANSITION');
  });

  it('cancels a paused task', async () => {
    const cancel = await codecall(env, 'tasks', 'cancel', pausedForCancel, '--db', db);
    expect(cancel.code).toBe(0);
    const view = lastJson(
      (await codecall(env, 'tasks', 'show', pausedForCancel, '--db', db, '--json')).stdout,
    );
    expect(view).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
  });

  it('reports unknown ids and bad database paths', async () => {
    const missing = await codecall(env, 'tasks', 'show', 'task_nope', '--db', db);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error NOT_FOUND');
    const noDb = await codecall(env, 'tasks', 'list', '--db', join(dir, 'nope', 'x.db'));
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain('no task database');
    const badDir = await codecall(env, 'exec', join(dir, 'ok.ts'), '--db', join(dir, 'nope', 'x.db'));
    expect(badDir.code).toBe(2);
    expect(badDir.stderr).toContain('cannot open task database');
  });

  it('pauses for approval, shows the pending requests, and runs on after approve/reject', async () => {
    await writeFile(
      join(dir, 'approval-tools.js'),
      `import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'pay',
    description: 'pays someone',
    requiresApproval: (args) => args.amount > 100,
    execute: (args) => 'paid ' + args.to,
  }),
];
`,
    );
    await writeFile(
      join(dir, 'pay.js'),
      `const small = await tools.pay({ to: 'cafe', amount: 5 });
const big = await Promise.allSettled([tools.pay({ to: 'landlord', amount: 900 }), tools.pay({ to: 'shop', amount: 300 })]);
return [small, ...big.map((r) => r.status === 'fulfilled' ? r.value : r.reason.code)];
`,
    );
    const tools = join(dir, 'approval-tools.js');
    const first = await codecall(env, 'exec', join(dir, 'pay.js'), '--db', db, '--tools', tools, '--json');
    expect(first.code).toBe(0);
    const paused = lastJson(first.stdout);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'approval_required' });
    expect(paused.pending_approvals).toEqual([
      { id: 'call-2', tool: 'tools.pay', arguments: { to: 'landlord', amount: 900 } },
      { id: 'call-3', tool: 'tools.pay', arguments: { to: 'shop', amount: 300 } },
    ]);
    const id = String(paused.task_id);
    const approve = await codecall(env, 'tasks', 'approve', id, 'call-2', '--db', db, '--json');
    expect(approve.code).toBe(0);
    // Recorded, not run: the task is runnable, and call-3 still waits.
    expect(lastJson(approve.stdout)).toMatchObject({
      status: 'pending',
      pending_approvals: [{ id: 'call-3', tool: 'tools.pay', arguments: { to: 'shop', amount: 300 } }],
    });
    const resumed = await codecall(env, 'tasks', 'resume', id, '--db', db, '--tools', tools, '--json');
    expect(lastJson(resumed.stdout)).toMatchObject({
      status: 'paused',
      pause_reason: 'approval_required',
      pending_approvals: [{ id: 'call-3' }],
    });
    const noReason = await codecall(env, 'tasks', 'reject', id, 'call-3', '--db', db);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('--reason');
    const reject = await codecall(
      env,
      'tasks',
      'reject',
      id,
      'call-3',
      '--reason',
      'not this month',
      '--db',
      db,
      '--tools',
      tools,
      '--resume',
      '--json',
    );
    expect(reject.code).toBe(0);
    expect(lastJson(reject.stdout)).toMatchObject({
      status: 'succeeded',
      result: { output: ['paid cafe', 'paid landlord', 'TOOL_REJECTED'] },
    });
  });
});
