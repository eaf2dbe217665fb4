// The resume measurement shared by bench/durable.ts and bench/durable-resume-vs-run.ts: a task pauses while its
// last call (`hold`) runs after `calls` journaled ones; timed from `runTask` of the paused task to `succeeded`
// (claim, journal read, replay of `calls` outcomes in a fresh VM, `hold` live, result committed), or with a kept
// paused VM (ADR 0056) the same without the replay: the VM restored, `hold` issued again.
import { defineTool, idempotencyScope, TaskRunner, ToolRegistry } from '../dist/internal.js';
import type { SandboxDriver, TaskStore } from '../dist/internal.js';
import { createHoldTool } from './hold-tool.ts';

export const resumeProgram = (calls: number): string =>
  `for (let i = 0; i < ${calls}; i++) await tools.echo({ i }); await tools.hold(); return 1;`;

export interface ResumeBench {
  readonly runner: TaskRunner;
  /** Lets `hold` wait for an abort (true: a pause) or answer at once (false: the resumed run finishes). */
  holding: boolean;
  /** One sample; with `measureRead`, also the journal read the resume starts with, timed apart from it. */
  resume(
    calls: number,
    options?: { measureRead?: boolean },
  ): Promise<{ ms: number; entries: number; readMs: number; cpuMs: number }>;
}

export function createResumeBench(
  store: TaskStore,
  driver: SandboxDriver,
  /**
   * `pausedVmBudgetBytes` 0: every resume replays the journal; default: the runner's (a paused VM is kept and
   * resumed, ADR 0056). `wholeRead`: the kept VM's journal is dropped after the pause, so its resume reads the
   * journal whole (the A/B of the 2026-12-07 amendment).
   */
  options: { pausedVmBudgetBytes?: number; wholeRead?: boolean } = {},
): ResumeBench {
  const echo = defineTool({ name: 'echo', description: '', effect: 'read', execute: (a) => a });
  const hold = createHoldTool();
  const whole = options.wholeRead === true;
  const runner = new TaskRunner({
    store,
    driver,
    tools: new ToolRegistry([echo, hold.tool]),
    owner: 'bench',
    leaseMs: 30_000,
    ...(options.pausedVmBudgetBytes === undefined
      ? {}
      : { pausedVmBudgetBytes: options.pausedVmBudgetBytes }),
  });
  const bench: ResumeBench = {
    runner,
    get holding() {
      return hold.holding;
    },
    set holding(on: boolean) {
      hold.holding = on;
    },
    async resume(calls, options = {}) {
      const task = await store.createTask({
        kind: 'code',
        code: resumeProgram(calls),
        language: 'javascript',
        seed: 1,
        // The live run that builds the journal commits each call (fsync): on a busy machine 1,000 calls can take
        // longer than the default 30 s, which would fail the task before it pauses. The resume is not affected.
        limits: { timeoutMs: 600_000 },
      });
      const holdStarted = hold.started();
      const running = runner.runTask(task.id);
      // The run may end before `hold` starts (a failure): then the wait ends with it.
      await Promise.race([holdStarted, running]);
      runner.pause(task.id);
      await running;
      const paused = await store.getTask(task.id);
      if (paused?.status !== 'paused')
        throw new Error(`expected paused, got ${paused?.status} ${JSON.stringify(paused?.error ?? null)}`);
      await store.updateTask(task.id, { status: 'pending' }, { expectedVersion: paused.version });
      if (whole) runner.pausedVms?.dropJournal(idempotencyScope(task.id, 0));
      let entries = 0;
      let readMs = 0;
      if (options.measureRead) {
        const reading = performance.now();
        entries = (await store.readJournal(task.id)).length; // what the resume reads first (checksums verified)
        readMs = performance.now() - reading;
      }
      bench.holding = false;
      const started = performance.now();
      const cpu = process.cpuUsage();
      const done = await runner.runTask(task.id); // replays `calls` outcomes, then runs `hold` live
      const ms = performance.now() - started;
      // CPU of the whole process (every thread): what a loaded machine's wall time hides.
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      bench.holding = true;
      if (done?.status !== 'succeeded') throw new Error(`resume ended ${done?.status}`);
      return { ms, entries, readMs, cpuMs };
    },
  };
  return bench;
}
