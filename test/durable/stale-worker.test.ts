import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import { startCrashWorker } from './crash-fixture.ts';
import { until, useDurableFixture } from './fixture.ts';

// A worker that stalls past its lease (its event loop stands still, as under SIGSTOP, right after an unsafe call's
// intent is committed) and is replaced by another must start no side effect once it resumes: before a tool that
// is not `read` starts, the worker proves its lease in the store (and by its own clock), and it says in its log
// that it lost it. Tools get the lease's fencing token, so an external system can refuse a stale writer too.

describe('a worker that lost its lease does no more side effects', () => {
  const fx = useDurableFixture('stale-worker');

  it('a call whose intent was committed before the stall does not start once another worker took over', async () => {
    const ledger = `${fx.path}.ledger`;
    const code = `await tools.note({});\nreturn await tools.charge({});`;
    const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const worker = startCrashWorker('stale-worker.ts', [fx.path, ledger, task.id, '1500']);
    let stdout = '';
    worker.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    // The stall began: the worker's lease (300 ms) runs out while it stands still; this process takes over.
    await until(() => {
      try {
        return readFileSync(ledger, 'utf8').includes('"stall"');
      } catch {
        return false;
      }
    }, 20_000);
    let taken = null;
    await until(async () => {
      taken = await fx.store.claimTask('second', { leaseMs: 60_000, taskId: task.id });
      return taken !== null;
    }, 10_000);
    expect(await worker.exited).toBe(0);
    const lines = readFileSync(ledger, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { what: string; token: number | null });
    // The note ran under the first lease (its token handed to the tool); the charge never started.
    expect(lines).toEqual([
      { what: 'note', pid: worker.child.pid, token: 1 },
      { what: 'stall', pid: worker.child.pid, token: null },
    ]);
    const report = JSON.parse(stdout.trim()) as { log: string[] };
    expect(report.log).toEqual([expect.stringMatching(/lost its lease/)]);
    // The journal holds the charge's intent and no outcome: the new owner decides it (unsafe: a human).
    const journal = await fx.store.readJournal(task.id);
    expect(journal.filter((e) => e.type === 'tool_intent').map((e) => e.data.tool)).toEqual([
      'tools.note',
      'tools.charge',
    ]);
    expect(journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id)).toEqual(['call-1']);
    expect(taken).toMatchObject({ fencingToken: 2 });
  });

  it('a running tool sees its signal aborted once a renewal finds the lease taken, and the loss is logged', async () => {
    const seen: string[] = [];
    const log: string[] = [];
    const tools = new ToolRegistry([
      defineTool({
        name: 'wait',
        description: 'runs until stopped (unsafe)',
        effect: 'unsafe',
        execute: (_a, ctx) =>
          new Promise((resolve) => {
            seen.push(`started with token ${ctx.fencingToken}`);
            const timer = setTimeout(() => resolve('not stopped'), 10_000);
            ctx.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              seen.push('aborted');
              resolve('stopped');
            });
          }),
      }),
    ]);
    const runner = new TaskRunner({
      store: fx.store,
      driver: fx.driver,
      tools,
      owner: 'holder',
      leaseMs: 300,
      log: (l) => log.push(l),
    });
    const code = `return await tools.wait({});`;
    const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const running = runner.runTask(task.id);
    await until(() => seen.length > 0);
    // Another worker took the task (its claim bumped the token): the holder's next renewal is refused.
    const db = new Database(fx.path);
    db.prepare(`UPDATE tasks SET fencing_token = fencing_token + 1, lease_owner = 'other' WHERE id = ?`).run(
      task.id,
    );
    db.close();
    await expect(running).rejects.toMatchObject({ code: 'FENCED' });
    expect(seen).toEqual([expect.stringMatching(/^started with token \d+$/), 'aborted']);
    expect(log).toEqual([expect.stringMatching(/lost its lease/)]);
  });
});
