import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { createQuickJsDriver } from '../../src/internal.ts';
import type { QuickJsDriver } from '../../src/internal.ts';
import { applyAction } from './state-machine-actions.ts';
import { checkEnds, checkWrites, driveToEnd, expectedResult } from './state-machine-checks.ts';
import type { DrivePolicy } from './state-machine-checks.ts';
import { actionArb } from './state-machine-model.ts';
import type { Action, RunLog } from './state-machine-model.ts';
import { World } from './state-machine-world.ts';

// The durable task state machine under random interleavings of submit, pause, resume, cancel, approve, reject,
// input, needs-attention decisions (retry, skip, fail), waits, crashes and graceful restarts, over a real SQLite
// file (one per run) and the real quickjs driver. Two runtimes share the file, each on its own connection; a
// crash makes one's store refuse everything from a chosen write on (it can write nothing more, its leases
// expire), and a new runtime takes its place and recovers by replay.
//
// Properties: only transitions of TASK_TRANSITIONS are ever written, and nothing is written to a task after it
// ended (so it ends exactly once and stays ended); an action on a paused or ended task is accepted or refused
// exactly as the rules say, and a refused one changes nothing; a refused action anywhere journals nothing; a
// succeeded task returns what an uninterrupted run with the same decisions returns; a cancelled task was asked
// to cancel and an accepted cancel is honoured; no call has two outcomes; no unsafe call runs unapproved or more
// often than approved and retried. The bugs it found have minimal cases in cancel-wins.test.ts,
// paused-actions.test.ts and interrupted-calls.test.ts.
//
// PROPERTY_SEED (and PROPERTY_PATH) from fast-check's report repeat a failure (PROPERTY_RANDOM=1: a new seed); PROPERTY_RUNS sets the number of
// runs; PROPERTY_SHRINK=1 shrinks a failure (slow: every step is a real run); PROPERTY_VERBOSE=1 prints each
// run's trace. Runs stop starting after PROPERTY_BUDGET_MS (0: no budget; ignored when repeating or shrinking).

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 30);
const SHRINK = process.env.PROPERTY_SHRINK === '1';
const PATH = process.env.PROPERTY_PATH;
// A fixed seed by default, like the crash tests: CI runs the same 30 interleavings every time (a failure there is
// repeatable as is); PROPERTY_RANDOM=1 explores new ones.
const SEED =
  process.env.PROPERTY_SEED !== undefined
    ? Number(process.env.PROPERTY_SEED)
    : process.env.PROPERTY_RANDOM === '1'
      ? undefined
      : 20261201;
/** Until the known slow re-pause is fixed a run can take 5-15 s instead of ~0.5 s; this keeps the file bounded. */
const BUDGET_MS = SHRINK || PATH ? 0 : Number(process.env.PROPERTY_BUDGET_MS ?? 45_000);
/** Fewer runs than this within the budget fails: the property would say too little. */
const MIN_RUNS = Math.min(NUM_RUNS, 8);

describe('durable task state machine (property)', () => {
  let driver: QuickJsDriver;
  let root: string;
  let roll = NaN;

  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    root = await mkdtemp(join(tmpdir(), 'codecall-state-machine-'));
    // The reference: one task run to its end without interruptions (all approved, input given).
    const world = await World.open(await mkdtemp(join(root, 'reference-')), driver, 1);
    const log: RunLog = { tasks: [], refusals: [], trace: [] };
    try {
      await applyAction(world, log, { kind: 'submit', via: 0 }, 0);
      await driveToEnd(world, log);
      const model = log.tasks[0]!;
      const record = await world.observer.getTask(model.id);
      expect(record?.status).toBe('succeeded');
      const result = decodeValue(record!.result!) as { roll: number };
      roll = result.roll;
      expect(result).toEqual(expectedResult(model, await world.observer.readJournal(model.id), roll));
    } finally {
      await world.close();
    }
  });
  afterAll(async () => {
    await driver?.close();
    await rm(root, { recursive: true, force: true });
  });

  async function run(actions: readonly Action[], policy: DrivePolicy): Promise<void> {
    const dir = await mkdtemp(join(root, 'run-'));
    const world = await World.open(dir, driver, 2);
    const log: RunLog = { tasks: [], refusals: [], trace: [] };
    const times: number[] = [performance.now()];
    try {
      const all: Action[] = [{ kind: 'submit', via: 0 }, ...actions];
      for (const [i, action] of all.entries()) await applyAction(world, log, action, i);
      times.push(performance.now());
      await driveToEnd(world, log, policy);
      times.push(performance.now());
      await checkEnds(world, log, roll);
      times.push(performance.now());
      // Every runtime stopped (dead ones too) before the writes are judged: a late write would show.
      await world.closeRuntimes();
      checkWrites(world, log);
      if (process.env.PROPERTY_VERBOSE) {
        const phases = times.slice(1).map((t, i) => Math.round(t - times[i]!));
        console.log(`${log.trace.join('\n')}\nphases (actions, drive, ends) ms: ${phases.join(' ')}`);
      }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      throw new Error(`${message}\n  trace:\n    ${log.trace.join('\n    ')}`, { cause: e });
    } finally {
      await world.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('writes only legal transitions and ends every task exactly once, as the decisions say', async () => {
    const started = performance.now();
    let ran = 0;
    const actionsArb = fc.array(actionArb, { minLength: 3, maxLength: 20 });
    // How the final drive decides what is still open: which unsafe calls (by `n`) it rejects; retry or skip.
    const policyArb = fc.record({
      reject: fc.subarray([1, 2]),
      attention: fc.constantFrom('retry' as const, 'skip' as const),
    });
    const property = fc.asyncProperty(actionsArb, policyArb, async (actions, policy) => {
      if (BUDGET_MS > 0 && performance.now() - started > BUDGET_MS) return;
      ran++;
      await run(actions, policy);
    });
    await fc.assert(property, {
      numRuns: NUM_RUNS,
      ...(SEED === undefined ? {} : { seed: SEED }),
      ...(PATH ? { path: PATH } : {}),
      endOnFailure: !SHRINK,
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.info(`state-machine property: ${ran} of ${NUM_RUNS} runs in ${seconds} s`);
    if (!PATH) expect(ran, 'runs done within the time budget').toBeGreaterThanOrEqual(MIN_RUNS);
  }, 300_000);
});
