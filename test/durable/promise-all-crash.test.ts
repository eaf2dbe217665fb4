import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import type { JournalEntry, TaskStore } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { rng, startCrashWorker } from './crash-fixture.ts';

// Promise.all replay across a real crash: a worker process runs `Promise.all` of three tool calls that finish in a
// seeded random order, and is SIGKILLed once exactly two outcomes are journaled (the third call blocks). A new
// process claims the task after its lease expires and finishes it. The result must equal an uninterrupted run's,
// the two completed calls must not run again, only the third may, and the journal keeps the first two outcomes
// as they were. Repeat one seed with PROMISE_ALL_SEED=n.

const program = (task: string, delays: readonly number[]) => `
const delays = ${JSON.stringify(delays)};
const seen = [];
const results = await Promise.all([0, 1, 2].map(async (i) => {
  const r = await tools.work({ task: '${task}', i, delay: delays[i] });
  seen.push(i);
  return r;
}));
return { results, seen, roll: Math.floor(Math.random() * 1e9) };
`;

/** Delays far enough apart (>= 120 ms) that the completion order is the order of the delays, even on a busy box. */
function delaysFor(seed: number): number[] {
  const random = rng(seed);
  const slots = [0, 1, 2];
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  return slots.map((slot) => 20 + slot * 150 + Math.floor(random() * 30));
}

function startWorker(db: string, effects: string, owner: string, block?: string) {
  return startCrashWorker('crash-worker-promise-all.ts', [db, effects, owner, ...(block ? [block] : [])]);
}

const outcomesOf = (journal: readonly JournalEntry[]) => journal.filter((e) => e.type === 'tool_outcome');

/** call_id -> the call's `i`, from the journaled intents. */
function callIndex(journal: readonly JournalEntry[]): Map<string, number> {
  const byCall = new Map<string, number>();
  for (const e of journal.filter((x) => x.type === 'tool_intent')) {
    byCall.set(String(e.data.call_id), (decodeValue(String(e.data.args)) as { i: number }).i);
  }
  return byCall;
}

const envSeed = process.env.PROMISE_ALL_SEED;
const SEEDS = envSeed ? [Number(envSeed)] : [20261201, 2, 8]; // slowest call 1, 2, 0; orders 2-0-1, 1-0-2, 2-1-0

describe('Promise.all replay after a SIGKILL between outcomes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-promise-all-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each(SEEDS)(
    'seed %i: only the call in flight runs again, the journaled order stays',
    async (seed) => {
      const delays = delaysFor(seed);
      const slowest = delays.indexOf(Math.max(...delays));
      const byDelay = [0, 1, 2].sort((a, b) => delays[a]! - delays[b]!);
      const db = join(dir, `tasks-${seed}.db`);
      const effects = join(dir, `effects-${seed}.log`);
      await writeFile(effects, '');
      const store: TaskStore = await createSqliteTaskStore({ path: db });
      try {
        const crashed = await store.createTask({
          kind: 'code',
          code: program('crash', delays),
          language: 'javascript',
          seed,
        });

        // First process: dies once two outcomes are journaled and the third call has started.
        const first = startWorker(db, effects, 'worker-1', `crash ${slowest}`);
        const deadline = Date.now() + 20_000;
        for (;;) {
          const journaled = outcomesOf(await store.readJournal(crashed.id)).length;
          const log = await readFile(effects, 'utf8');
          if (journaled >= 2 && log.includes(`crash ${slowest} start`)) break;
          if (Date.now() > deadline)
            throw new Error(`seed ${seed}: no two outcomes in 20 s: ${first.stderr()}`);
          await sleep(5);
        }
        first.child.kill('SIGKILL');
        await first.exited;

        const atKill = await store.readJournal(crashed.id);
        const outcomesAtKill = outcomesOf(atKill);
        expect(outcomesAtKill, `seed ${seed}`).toHaveLength(2);
        const index = callIndex(atKill);
        expect(index.size).toBe(3);
        // The two journaled are the two fastest, in the order they finished.
        expect(outcomesAtKill.map((e) => index.get(String(e.data.call_id)))).toEqual(byDelay.slice(0, 2));
        expect((await store.getTask(crashed.id))?.status).toBe('running');

        // The reference: the same program, never interrupted (the second process runs it too).
        const reference = await store.createTask({
          kind: 'code',
          code: program('ref', delays),
          language: 'javascript',
          seed,
        });
        const second = startWorker(db, effects, 'worker-2');
        const code = await Promise.race([second.exited, sleep(30_000).then(() => 'timeout' as const)]);
        if (code === 'timeout') second.child.kill('SIGKILL');
        expect(code, second.stderr()).toBe(0);

        const done = (await store.getTask(crashed.id))!;
        const ref = (await store.getTask(reference.id))!;
        expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
        expect(ref.status, JSON.stringify(ref.error)).toBe('succeeded');
        expect(done.attempts).toBe(2); // claimed again after the dead worker's lease expired
        const value = decodeValue(done.result!) as { seen: number[] };
        expect(value).toEqual(decodeValue(ref.result!));
        expect(value.seen).toEqual(byDelay);

        // The journal: the first two outcomes exactly as before the kill, then the third; each call once.
        const after = await store.readJournal(crashed.id);
        const outcomes = outcomesOf(after);
        expect(outcomes).toHaveLength(3);
        expect(outcomes.slice(0, 2)).toEqual(outcomesAtKill);
        expect(index.get(String(outcomes[2]!.data.call_id))).toBe(slowest);
        expect(after.filter((e) => e.type === 'tool_intent')).toEqual(
          atKill.filter((e) => e.type === 'tool_intent'),
        );
        expect(after.slice(0, atKill.length)).toEqual(atKill);

        // Side effects: the completed calls ran once; only the one in flight at the kill ran again.
        const lines = (await readFile(effects, 'utf8')).trim().split('\n');
        const count = (line: string) => lines.filter((l) => l === line).length;
        for (const i of [0, 1, 2]) {
          expect(count(`crash ${i} start`), `seed ${seed}, call ${i}`).toBe(i === slowest ? 2 : 1);
          expect(count(`crash ${i} done`), `seed ${seed}, call ${i}`).toBe(1);
          expect(count(`ref ${i} start`)).toBe(1);
          expect(count(`ref ${i} done`)).toBe(1);
        }
        console.log(
          `[promise-all] seed ${seed}: delays ${delays.join('/')}, completion order ${byDelay.join(',')}`,
        );
      } finally {
        await store.close();
      }
    },
    60_000,
  );
});
