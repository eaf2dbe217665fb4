import { describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { defineTool, idempotencyScope, ToolRegistry } from '../../src/internal.ts';
import type { JournalEntry, TaskStore } from '../../src/internal.ts';
import { journalChecksum } from '../../src/store/index.ts';
import { openForTampering } from '../store/tamper.ts';
import { useDurableFixture } from './fixture.ts';

// ADR 0056 (amended 2026-12-07): a resume from a kept paused VM reads only the journal from the VM's mark on; the
// entries before it are the ones the pausing run kept, vouched for by the mark's checksum. A journal that moved
// under the mark is read whole and replayed; one damaged after the mark fails as it does without a kept VM.

const fx = useDurableFixture('paused-vm-journal');

function runnerOf(
  store: TaskStore,
  budget = 64 * 1024 * 1024,
  more: { paid?: unknown[]; journalLimits?: { maxEntries?: number } } = {},
): TaskRunner {
  return new TaskRunner({
    ...(more.journalLimits ? { journalLimits: more.journalLimits } : {}),
    store,
    driver: fx.driver,
    tools: new ToolRegistry([
      defineTool({ name: 'echo', description: '', effect: 'read', execute: (a) => a }),
      defineTool({
        name: 'pay',
        description: '',
        effect: 'unsafe',
        requiresApproval: true,
        execute: (a) => {
          more.paid?.push(a);
          return { paid: (a as { amount: number }).amount };
        },
      }),
    ]),
    owner: 'w',
    pausedVmBudgetBytes: budget,
  });
}

const PROGRAM = `
let s = 0;
for (let i = 0; i < 30; i++) s += (await tools.echo({ i })).i;
const r = await tools.pay({ amount: s });
return { s, r, t: Date.now() };
`;

async function paused(runner: TaskRunner): Promise<string> {
  const task = await fx.store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 3 });
  expect(await runner.runTask(task.id)).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
  return task.id;
}

async function approve(runner: TaskRunner, id: string) {
  const [req] = (await fx.store.readJournal(id)).filter((e) => e.type === 'approval_request');
  return runner.decide(id, [{ approvalId: String(req?.data.approval_id), decision: 'approve' }], 'ops');
}

/** Rewrites the task's journal from `seq` on with `edit` applied at `seq`, as a valid chain (a restored copy). */
function rewrite(id: string, seq: number, edit: (data: Record<string, unknown>) => Record<string, unknown>) {
  const db = openForTampering(fx.path);
  const rows = db
    .prepare('SELECT seq, type, data, checksum FROM journal WHERE task_id = ? ORDER BY seq')
    .all(id) as { seq: number; type: string; data: string; checksum: string }[];
  let prev = rows[seq - 2]?.checksum ?? '';
  const update = db.prepare('UPDATE journal SET data = ?, checksum = ? WHERE task_id = ? AND seq = ?');
  for (const row of rows.slice(seq - 1)) {
    const data = JSON.parse(row.data) as Record<string, unknown>;
    const next = row.seq === seq ? edit(data) : data;
    prev = journalChecksum(prev, row.seq, row.type, next);
    update.run(JSON.stringify(next), prev, id, row.seq);
  }
  db.close();
}

const comparable = (journal: readonly JournalEntry[]) => journal.map((e) => [e.seq, e.type, e.checksum]);

describe('the journal a resume from a kept paused VM reads (ADR 0056)', () => {
  it('reads only the entries from the mark on, and runs on the same journal a whole read gives', async () => {
    const runner = runnerOf(fx.store);
    const id = await paused(runner);
    const kept = runner.pausedVms?.journalOf(idempotencyScope(id, 0));
    const whole = await fx.store.readJournal(id);
    expect(kept?.entries.at(-1)?.seq).toBe(kept?.mark.seq);
    // The kept journal is the stored one up to the mark, entry for entry.
    expect(comparable(kept?.entries ?? [])).toEqual(comparable(whole.slice(0, kept?.mark.seq)));
    const done = await approve(runner, id);
    expect(done?.status).toBe('succeeded');
    expect(runner.pausedVms?.counts).toMatchObject({ tailReads: 1, tailMoved: 0, resumed: 1, stale: 0 });
    // Dropped with the VM it was kept for.
    expect(runner.pausedVms?.journalOf(idempotencyScope(id, 0))).toBeUndefined();
  });

  it('reads the journal whole and replays when its head moved under the mark (a rewritten journal)', async () => {
    const runner = runnerOf(fx.store);
    const id = await paused(runner);
    const clockSeq = (await fx.store.readJournal(id)).find((e) => e.type === 'clock')?.seq ?? 0;
    // The journal's start clock changed, chained anew: every checksum from there on differs, the mark's too.
    rewrite(id, clockSeq, (d) => ({ ...d, clock: 1_000 }));
    const done = await approve(runner, id);
    expect(runner.pausedVms?.counts).toMatchObject({ tailReads: 0, tailMoved: 1, resumed: 0, stale: 1 });
    expect(done?.status).toBe('succeeded');
    expect(JSON.parse(String(done?.result))).toMatchObject({ s: 435, r: { paid: 435 } });
    // The replay went on from the journal as stored now, not from the kept copy.
    expect((await fx.store.readJournal(id)).find((e) => e.type === 'clock')?.data).toEqual({ clock: 1_000 });
  });

  it('fails CHECKPOINT_CORRUPT for a row damaged after the mark, as a whole read does', async () => {
    const runner = runnerOf(fx.store);
    const id = await paused(runner);
    const mark = runner.pausedVms?.journalOf(idempotencyScope(id, 0))?.mark.seq ?? 0;
    const last = (await fx.store.readJournal(id)).at(-1)?.seq ?? 0;
    expect(last).toBeGreaterThan(mark);
    const db = openForTampering(fx.path);
    db.prepare('UPDATE journal SET data = ? WHERE task_id = ? AND seq = ?').run('{"action":"x"}', id, last);
    db.close();
    // Run again without a decision (the decision's own read of the journal would find the damage first).
    const before = await fx.store.getTask(id);
    await fx.store.updateTask(id, { status: 'pending' }, { expectedVersion: before?.version ?? 0 });
    const done = await runner.runTask(id);
    expect(runner.pausedVms?.counts).toMatchObject({ tailReads: 0, resumed: 0 });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'CHECKPOINT_CORRUPT' } });
  });

  it('decides no call before the run attempt is committed: an attempt refused fails the run, the call not run', async () => {
    // The real store, with a run's attempt slow to commit (a slow disk): the restored VM is up long before it.
    let slow = false;
    const store = new Proxy(fx.store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (key !== 'appendJournal') return (value as (...a: unknown[]) => unknown).bind(target);
        return async (...args: Parameters<TaskStore['appendJournal']>) => {
          const attempt = args[1].some((e) => e.type === 'control' && e.data.action === 'attempt');
          if (slow && attempt) await new Promise((r) => setTimeout(r, 300));
          return target.appendJournal(...args);
        };
      },
    });
    // A read that waits for the pause the first time, and counts every start.
    let starts = 0;
    let started: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => (started = resolve));
    const hold = defineTool({
      name: 'hold',
      description: '',
      effect: 'read',
      execute: (_a, ctx) => {
        starts += 1;
        if (starts > 1) return 'released';
        started();
        return new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      },
    });
    const limits: { maxEntries?: number } = {};
    const runner = new TaskRunner({
      store,
      driver: fx.driver,
      tools: new ToolRegistry([hold]),
      owner: 'w',
      journalLimits: limits,
    });
    const task = await fx.store.createTask({
      kind: 'code',
      code: 'return await tools.hold();',
      seed: 1,
      language: 'javascript',
    });
    const running = runner.runTask(task.id);
    await holding;
    runner.pause(task.id);
    expect(await running).toMatchObject({ status: 'paused' });
    expect(runner.pausedVms?.size).toBe(1);
    // Read at each run: the bound is lowered so that the resume's attempt is refused.
    limits.maxEntries = (await fx.store.readJournal(task.id)).length;
    slow = true;
    const paused = await fx.store.getTask(task.id);
    await fx.store.updateTask(task.id, { status: 'pending' }, { expectedVersion: paused?.version ?? 0 });
    const done = await runner.runTask(task.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'JOURNAL_LIMIT' } });
    // The restored VM asked for `hold` again at once; it was not run while the attempt was uncommitted.
    expect(starts).toBe(1);
  });
});
