import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { rng, startCrashWorker } from './crash-fixture.ts';

// Real crashes: a worker process is SIGKILLed at seeded random moments, again and again, and a new one recovers
// the tasks from the SQLite file by replay. Every task must end as an uninterrupted run would, and no completed
// tool call may run twice (only the one in flight at a kill may).

const PROGRAM = (task: string) => `
const results = [];
for (let i = 0; i < 6; i++) results.push(await tools.effect({ task: '${task}', i }));
const more = await Promise.all([6, 7, 8].map((i) => tools.effect({ task: '${task}', i })));
return { sum: [...results, ...more].reduce((n, r) => n + r.square, 0), roll: Math.floor(Math.random() * 1e6) };
`;

function startWorker(db: string, effects: string, owner: string) {
  return startCrashWorker('crash-worker.ts', [db, effects, owner]);
}

describe('crash recovery with real processes and SIGKILL', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-crash-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('ends every task as an uninterrupted run would, without repeating completed calls', async () => {
    const seed = Number(process.env.CRASH_SEED ?? 20261129);
    const random = rng(seed);
    const db = join(dir, 'tasks.db');
    const effects = join(dir, 'effects.log');
    await writeFile(effects, '');
    const store = await createSqliteTaskStore({ path: db });
    const ids: string[] = [];
    for (const name of ['t1', 't2', 't3']) {
      const t = await store.createTask({
        kind: 'code',
        code: PROGRAM(name),
        language: 'javascript',
        seed: 5,
      });
      ids.push(t.id);
    }
    await store.close();

    let kills = 0;
    for (let round = 0; round < 40; round++) {
      const w = startWorker(db, effects, `worker-${round}`);
      const killAfter = Math.floor(random() * 250);
      const outcome = await Promise.race([
        w.exited.then((code) => ({ exited: code })),
        w.ready.then(
          () =>
            new Promise<{ exited: undefined }>((r) => setTimeout(() => r({ exited: undefined }), killAfter)),
        ),
      ]);
      if (outcome.exited !== undefined) {
        expect(outcome.exited, w.stderr()).toBe(0);
        break;
      }
      w.child.kill('SIGKILL');
      await w.exited;
      kills += 1;
    }
    expect(kills, `seed ${seed}: the worker was never killed; the test proved nothing`).toBeGreaterThan(0);

    const check = await createSqliteTaskStore({ path: db });
    try {
      for (const id of ids) {
        const task = await check.getTask(id);
        expect(task?.status, `seed ${seed}, ${id}: ${JSON.stringify(task?.error)}`).toBe('succeeded');
        // 0..8 squared sum to 204; the roll comes from the seeded Math.random and is the same in every run.
        expect(decodeValue(task!.result!)).toEqual({ sum: 204, roll: expect.any(Number) as unknown });
      }
      for (const id of ids) {
        // The journal holds each call once: one intent, one outcome, whatever the crashes.
        const journal = await check.readJournal(id);
        const intents = journal.filter((e) => e.type === 'tool_intent').map((e) => e.data.call_id);
        const outcomes = journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id);
        expect(new Set(intents).size).toBe(9);
        expect(intents).toHaveLength(9);
        expect(new Set(outcomes).size).toBe(9);
        expect(outcomes).toHaveLength(9);
      }
      const rolls = await Promise.all(
        ids.map(async (id) => (decodeValue((await check.getTask(id))!.result!) as { roll: number }).roll),
      );
      expect(new Set(rolls).size).toBe(1);
    } finally {
      await check.close();
    }

    // Each call completed exactly once; a call may have started twice only if a kill interrupted it.
    const lines = (await readFile(effects, 'utf8')).trim().split('\n');
    const done = new Map<string, number>();
    const started = new Map<string, number>();
    for (const line of lines) {
      const [task, i, phase] = line.split(' ');
      const key = `${task} ${i}`;
      const map = phase === 'done' ? done : started;
      map.set(key, (map.get(key) ?? 0) + 1);
    }
    console.log(`[crash] seed ${seed}: ${kills} kills, ${lines.length} effect lines`);
    expect(done.size).toBe(27);
    const repeatedAfterDone = [...done].filter(([, n]) => n > 1);
    // A call whose outcome was journaled never runs again. One that finished but died before its outcome was
    // committed may run again (idempotent); there can be at most one such call per task per kill.
    expect(
      repeatedAfterDone.length,
      `seed ${seed}: ${JSON.stringify(repeatedAfterDone)}`,
    ).toBeLessThanOrEqual(kills * 3);
    const extraStarts = [...started.values()].reduce((n, c) => n + c - 1, 0);
    expect(extraStarts).toBeLessThanOrEqual(kills * 3);
  }, 120_000);
});
