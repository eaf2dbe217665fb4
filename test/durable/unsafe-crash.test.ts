import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import type { TaskStore } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { rng, startCrashWorker } from './crash-fixture.ts';

// Only a call in flight at a kill may run twice, and never an `unsafe` one. Worker processes running tasks that
// mix an idempotent tool (`stock`) and an unsafe one (`charge`) are SIGKILLed at seeded random moments, round
// after round. After each kill the journal shows exactly which calls were in flight (intent, no outcome). From
// the side-effect log: a completed call never starts again, an idempotent call starts again only if it was in
// flight at a kill, an unsafe call never starts twice. Every task ends as an uninterrupted run would, or paused
// with needs_attention exactly when one of its unsafe calls was in flight at a kill. Repeat a seed with
// UNSAFE_CRASH_SEED=n.

const PROGRAM = (task: string) => `
const out = [];
for (let i = 0; i < 6; i++) {
  out.push(await tools.stock({ task: '${task}', i }));
  if (i % 2 === 1) out.push(await tools.charge({ task: '${task}', i }));
}
const par = await Promise.all([
  tools.stock({ task: '${task}', i: 6 }),
  tools.charge({ task: '${task}', i: 7 }),
  tools.stock({ task: '${task}', i: 8 }),
]);
return { out, par, roll: Math.floor(Math.random() * 1e9) };
`;
const CALLS_PER_TASK = 12;
const TASKS_PER_SCENARIO = 9;
const SCENARIOS = 2;
const MAX_ROUNDS = 40;

function startWorker(db: string, effects: string, owner: string) {
  return startCrashWorker('crash-worker-unsafe.ts', [db, effects, owner]);
}

/** A call is named by what it does (`TASK TOOL I`), as in the side-effect log. */
interface CallState {
  readonly unsafe: boolean;
  readonly task: string;
  readonly done: boolean;
}

/** Every journaled call of every task, and whether its outcome is journaled. */
async function journaledCalls(store: TaskStore, ids: readonly string[]): Promise<Map<string, CallState>> {
  const calls = new Map<string, CallState>();
  for (const id of ids) {
    const journal = await store.readJournal(id);
    const outcomes = new Set(journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id));
    for (const e of journal.filter((x) => x.type === 'tool_intent')) {
      const { task, i } = decodeValue(String(e.data.args)) as { task: string; i: number };
      const tool = String(e.data.tool).replace('tools.', '');
      calls.set(`${task} ${tool} ${i}`, {
        unsafe: tool === 'charge',
        task: id,
        done: outcomes.has(e.data.call_id),
      });
    }
  }
  return calls;
}

interface Scenario {
  readonly kills: number;
  readonly inFlightAtKills: number;
  readonly needsAttention: number;
  readonly idempotentRepeats: number;
}

describe('crash recovery with unsafe tools, real processes and SIGKILL', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-unsafe-crash-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function reference(): Promise<unknown> {
    const db = join(dir, 'reference.db');
    const store = await createSqliteTaskStore({ path: db });
    try {
      const t = await store.createTask({
        kind: 'code',
        code: PROGRAM('ref'),
        language: 'javascript',
        seed: 11,
      });
      const w = startWorker(db, join(dir, 'reference.log'), 'reference');
      expect(await w.exited, w.stderr()).toBe(0);
      const done = await store.getTask(t.id);
      expect(done?.status, JSON.stringify(done?.error)).toBe('succeeded');
      return decodeValue(done!.result!);
    } finally {
      await store.close();
    }
  }

  async function scenario(seed: number, expected: unknown): Promise<Scenario> {
    const random = rng(seed);
    const db = join(dir, `tasks-${seed}.db`);
    const effects = join(dir, `effects-${seed}.log`);
    await writeFile(effects, '');
    const store = await createSqliteTaskStore({ path: db });
    try {
      const ids: string[] = [];
      for (let n = 0; n < TASKS_PER_SCENARIO; n++) {
        const code = PROGRAM(`t${n}`);
        ids.push((await store.createTask({ kind: 'code', code, language: 'javascript', seed: 11 })).id);
      }

      // Run, kill, snapshot the journal (the dead worker's committed state), repeat.
      const atKill: Map<string, CallState>[] = [];
      let finished = false;
      for (let round = 0; round < MAX_ROUNDS && !finished; round++) {
        const w = startWorker(db, effects, `worker-${seed}-${round}`);
        const killAfter = 30 + Math.floor(random() * 600);
        const ended = await Promise.race([
          w.exited.then((code) => ({ code })),
          w.ready.then(() => sleep(killAfter)).then(() => null),
        ]);
        if (ended) {
          expect(ended.code, `seed ${seed}: ${w.stderr()}`).toBe(0);
          finished = true;
          break;
        }
        w.child.kill('SIGKILL');
        await w.exited;
        atKill.push(await journaledCalls(store, ids));
        await appendFile(effects, `kill ${atKill.length}\n`);
      }
      expect(finished, `seed ${seed}: the tasks did not settle in ${MAX_ROUNDS} rounds`).toBe(true);
      const final = await journaledCalls(store, ids);

      // Starts per call and epoch (epoch k ran between kill k-1 and kill k; the last one exited by itself).
      const starts = new Map<string, number[]>();
      let epoch = 0;
      for (const line of (await readFile(effects, 'utf8')).trim().split('\n')) {
        if (line.startsWith('kill ')) {
          epoch += 1;
          continue;
        }
        const [task, tool, i, phase] = line.split(' ');
        if (phase !== 'start') continue;
        const key = `${task} ${tool} ${i}`;
        starts.set(key, [...(starts.get(key) ?? []), epoch]);
      }
      const journalAt = (e: number) => atKill[e] ?? final;
      const inFlightAt = (key: string) =>
        atKill.flatMap((snapshot, k) => {
          const call = snapshot.get(key);
          return call && !call.done ? [k] : [];
        });

      const where = (key: string) => `seed ${seed}, ${key}: starts in epochs ${starts.get(key)?.join(',')}`;
      let idempotentRepeats = 0;
      for (const [key, epochs] of starts) {
        // One process starts a call at most once (the lease outlives any stall, so no second run without a kill).
        expect(new Set(epochs).size, where(key)).toBe(epochs.length);
        // A tool runs only after its intent is committed.
        const [label = '', tool] = key.split(' ');
        const intent = { task: ids[Number(label.slice(1))], unsafe: tool === 'charge' };
        for (const e of epochs) expect(journalAt(e).get(key), where(key)).toMatchObject(intent);
        // A call whose outcome was journaled by a kill never starts after it.
        const completedBy = atKill.findIndex((snapshot) => snapshot.get(key)?.done);
        if (completedBy >= 0) expect(Math.max(...epochs), where(key)).toBeLessThanOrEqual(completedBy);
        if (key.includes(' charge ')) {
          expect(epochs, `${where(key)}: an unsafe call started twice`).toHaveLength(1);
        } else {
          // Each start after the first follows a kill that found the call in flight.
          const inFlight = inFlightAt(key);
          expect(
            epochs.length - 1,
            `${where(key)}; in flight at kills ${inFlight.join(',')}`,
          ).toBeLessThanOrEqual(inFlight.length);
          for (const e of epochs.slice(1)) {
            expect(
              inFlight.some((k) => k < e),
              where(key),
            ).toBe(true);
          }
          if (epochs.length > 1) idempotentRepeats += 1;
        }
      }

      // Each task ends as an uninterrupted run would, or needs a human exactly when an unsafe call was in doubt.
      let needsAttention = 0;
      for (const id of ids) {
        const task = (await store.getTask(id))!;
        const unsafeInDoubt = atKill.some((snapshot) =>
          [...snapshot.values()].some((c) => c.task === id && c.unsafe && !c.done),
        );
        const label = `seed ${seed}, ${id}: ${JSON.stringify(task.error)}`;
        if (unsafeInDoubt) {
          needsAttention += 1;
          expect(task, label).toMatchObject({
            status: 'paused',
            pauseReason: 'needs_attention',
            error: { code: 'NEEDS_ATTENTION' },
          });
        } else {
          expect(task.status, label).toBe('succeeded');
          expect(decodeValue(task.result!), label).toEqual(expected);
          const journal = await store.readJournal(id);
          const intents = journal.filter((e) => e.type === 'tool_intent').map((e) => e.data.call_id);
          const outcomes = journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id);
          expect(intents, label).toHaveLength(CALLS_PER_TASK);
          expect(new Set(intents).size, label).toBe(CALLS_PER_TASK);
          expect(outcomes, label).toHaveLength(CALLS_PER_TASK);
          expect(new Set(outcomes).size, label).toBe(CALLS_PER_TASK);
        }
      }
      const inFlightAtKills = atKill.filter((s) => [...s.values()].some((c) => !c.done)).length;
      return { kills: atKill.length, inFlightAtKills, needsAttention, idempotentRepeats };
    } finally {
      await store.close();
    }
  }

  it('repeats only calls in flight at a kill, never an unsafe one, and pauses for a human instead', async () => {
    const seed = Number(process.env.UNSAFE_CRASH_SEED ?? 20261201);
    const expected = await reference();
    const results: Scenario[] = [];
    for (let s = 0; s < SCENARIOS; s++) results.push(await scenario(seed + s, expected));
    const total = (k: keyof Scenario) => results.reduce((n, r) => n + r[k], 0);
    console.log(
      `[unsafe-crash] seed ${seed}: ${total('kills')} kills (${total('inFlightAtKills')} with calls in flight), ` +
        `${total('needsAttention')} tasks need attention, ${total('idempotentRepeats')} idempotent calls ran again`,
    );
    expect(
      total('kills'),
      `seed ${seed}: the worker was never killed; the test proved nothing`,
    ).toBeGreaterThan(0);
    expect(total('inFlightAtKills'), `seed ${seed}: no kill caught a call in flight`).toBeGreaterThan(0);
    // Up to 80 worker processes start here; on a loaded 2-core machine each start takes seconds.
  }, 240_000);
});
