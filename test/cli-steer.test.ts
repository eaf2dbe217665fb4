import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson, startCodecall, until } from './cli-fixture.ts';

// Steering durable tasks from other processes: every command is its own `codecall` process on one SQLite file.

const TOOLS = `
import { defineTool } from 'codecall';
export default [
  defineTool({ name: 'tick', description: 'a quick read', effect: 'read', execute: (a) => a.i }),
  defineTool({
    name: 'nap',
    description: 'sleeps, unless aborted first',
    // Not reads: the test finds them running by their journaled intent (a read's goes with its outcome).
    effect: 'idempotent',
    execute: (a, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('rested'), a.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
    }),
  }),
  defineTool({
    name: 'hang',
    description: 'waits until aborted, then says so on stderr',
    effect: 'idempotent',
    execute: (_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => {
      process.stderr.write('hang: aborted\\n');
      reject(new Error('aborted'));
    })),
  }),
];
`;
const TOOLS_V2 = TOOLS.replace(
  "description: 'a quick read'",
  "description: 'a quick read', input: { type: 'object', properties: { i: { type: 'number' } } }",
);

describe('codecall tasks pause|cancel|input|resolve across processes', () => {
  let dir: string;
  let db: string;
  let tools: string;

  beforeAll(async () => {
    dir = await cliTestDir('cli-steer');
    db = join(dir, 'tasks.db');
    tools = join(dir, 'tools.js');
    await writeFile(tools, TOOLS);
    await writeFile(join(dir, 'tools-v2.js'), TOOLS_V2);
    // The nap outlasts starting `tasks pause` as another process on a loaded machine (seconds under CI load).
    await writeFile(
      join(dir, 'nap.js'),
      'const a = await tools.tick({ i: 1 }); const b = await tools.nap({ ms: 6000 }); return [a, b];\n',
    );
    await writeFile(join(dir, 'hang.js'), 'await tools.hang({}); return 1;\n');
    await writeFile(
      join(dir, 'ask.js'),
      "const who = await input.wait('who', { timeoutSeconds: 600 }); return 'hello ' + who.name;\n",
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** Starts `exec --db` in the background; resolves once its task is running past its first tool call. */
  async function runningTask(program: string) {
    const w = startCodecall(
      {},
      'exec',
      join(dir, program),
      '--db',
      db,
      '--tools',
      tools,
      '--json',
      '--timeout',
      '60',
    );
    const store = await createSqliteTaskStore({ path: db });
    let id = '';
    try {
      await until(async () => {
        for (const t of (await store.listTasks({ status: 'running' })).tasks) {
          const journal = await store.readJournal(t.id);
          if (journal.some((e) => e.type === 'tool_intent' && e.data.tool !== 'tools.tick')) id = t.id;
        }
        return id !== '';
      });
    } finally {
      await store.close();
    }
    return { ...w, id };
  }

  it('pauses a task another process is running; it resumes from a third', { timeout: 60_000 }, async () => {
    const w = await runningTask('nap.js');
    const pause = await codecall({}, 'tasks', 'pause', w.id, '--db', db, '--json');
    expect(pause.code, pause.stderr).toBe(0);
    expect(await w.exited).toBe(0);
    expect(lastJson(w.stdout())).toMatchObject({
      task_id: w.id,
      status: 'paused',
      pause_reason: 'user_request',
    });
    const resumed = await codecall({}, 'tasks', 'resume', w.id, '--db', db, '--tools', tools, '--json');
    expect(lastJson(resumed.stdout)).toMatchObject({
      status: 'succeeded',
      result: { output: [1, 'rested'] },
    });
  });

  it('cancels a task another process is running; its tool call is aborted there', async () => {
    const w = await runningTask('hang.js');
    const cancel = await codecall(
      {},
      'tasks',
      'cancel',
      w.id,
      '--db',
      db,
      '--reason',
      'not needed',
      '--json',
    );
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(lastJson(cancel.stdout)).toMatchObject({ status: 'cancelled' });
    expect(await w.exited).toBe(1);
    expect(w.stderr()).toContain('hang: aborted');
    expect(lastJson(w.stdout())).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
  });

  it('waits for input, which another process supplies', async () => {
    const first = await codecall({}, 'exec', join(dir, 'ask.js'), '--db', db, '--tools', tools, '--json');
    expect(first.code).toBe(0);
    const paused = lastJson(first.stdout);
    expect(paused).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
      pending_inputs: [{ name: 'who' }],
    });
    const id = String(paused.task_id);
    const bad = await codecall({}, 'tasks', 'input', id, 'who', '{not json', '--db', db);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error INVALID_ARGUMENT');
    const wrong = await codecall({}, 'tasks', 'input', id, 'whom', '1', '--db', db);
    expect(wrong.code).toBe(2);
    const answered = await codecall(
      {},
      ...['tasks', 'input', id, 'who', '{"name":"Ada"}', '--db', db, '--tools', tools, '--resume', '--json'],
    );
    expect(answered.code, answered.stderr).toBe(0);
    expect(lastJson(answered.stdout)).toMatchObject({ status: 'succeeded', result: { output: 'hello Ada' } });
  });

  it('runs examples/refund.ts: pauses for the large refund, approved from another process', async () => {
    const tools = ['--tools', 'examples/refund-tools.ts'];
    const first = await codecall({}, 'exec', 'examples/refund.ts', '--db', db, ...tools, '--json');
    const paused = lastJson(first.stdout);
    expect(paused).toMatchObject({
      status: 'paused',
      pause_reason: 'approval_required',
      pending_approvals: [{ tool: 'tools.refund', arguments: { id: 'A101', amount: 240 } }],
    });
    const approval = (paused.pending_approvals as { id: string }[])[0]?.id ?? '';
    const id = String(paused.task_id);
    const done = await codecall(
      {},
      'tasks',
      'approve',
      id,
      approval,
      '--db',
      db,
      '--resume',
      ...tools,
      '--json',
    );
    expect(lastJson(done.stdout)).toMatchObject({
      status: 'succeeded',
      result: { output: ['A100: refunded 30', 'A101: refunded 240', 'A102: refunded 12'] },
    });
    const shown = await codecall({}, 'tasks', 'show', id, '--db', db, '--journal', '--json');
    const journal = lastJson(shown.stdout).journal as { type: string; data: Record<string, unknown> }[];
    expect(journal.find((e) => e.type === 'approval_decision')?.data).toMatchObject({
      approval_id: approval,
      decision: 'approve',
    });
    expect(journal.filter((e) => e.type === 'tool_outcome')).toHaveLength(6);
  });

  it('pauses for attention when the tools changed; resume --force accepts them, resolve fail ends it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await codecall({}, 'exec', join(dir, 'ask.js'), '--db', db, '--tools', tools, '--json');
      ids.push(String(lastJson(r.stdout).task_id));
    }
    const [forced, failed] = ids as [string, string];
    await codecall({}, 'tasks', 'input', forced, 'who', '{"name":"Bo"}', '--db', db);
    const v2 = join(dir, 'tools-v2.js');
    const changed = await codecall({}, 'tasks', 'resume', forced, '--db', db, '--tools', v2, '--json');
    expect(lastJson(changed.stdout)).toMatchObject({
      status: 'paused',
      pause_reason: 'needs_attention',
      resumable: true,
      error: { code: 'INCOMPATIBLE_CHECKPOINT' },
    });
    const ok = await codecall({}, 'tasks', 'resume', forced, '--db', db, '--tools', v2, '--force', '--json');
    expect(lastJson(ok.stdout)).toMatchObject({ status: 'succeeded', result: { output: 'hello Bo' } });

    await codecall({}, 'tasks', 'input', failed, 'who', '{"name":"Cy"}', '--db', db);
    await codecall({}, 'tasks', 'resume', failed, '--db', db, '--tools', v2);
    const skip = await codecall({}, 'tasks', 'resolve', failed, 'skip', '--db', db);
    expect(skip.code).toBe(2);
    expect(skip.stderr).toContain('--result');
    const end = await codecall(
      {},
      'tasks',
      'resolve',
      failed,
      'fail',
      '--reason',
      'stale',
      '--db',
      db,
      '--json',
    );
    expect(end.code).toBe(1);
    expect(lastJson(end.stdout)).toMatchObject({
      status: 'failed',
      error: { code: 'INCOMPATIBLE_CHECKPOINT' },
    });
  });
});
