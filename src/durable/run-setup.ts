import { CodecallError } from '../errors/index.ts';
import type { JournalEntry, JournalEntryInput, TaskRecord, TaskStore, ToolEffect } from '../spec/index.ts';
import { revisionCarry } from './revision-carry.ts';
import type { RevisionCarry } from './revision-carry.ts';
import type { RunnerTools } from './runner-tools.ts';

/** What a run journals before its program runs, and the guest's start clock. */
export interface RunSetup {
  readonly setup: readonly JournalEntryInput[];
  readonly startClock: number;
  readonly revision: RevisionCarry | null;
}

/**
 * The guest's start clock is journaled once, so every replay starts at the same time; a revision journals what it
 * may take over (ADR 0034); exec mode runs one code block, the task's program (an agent journals a block per step).
 * A revision whose source task is gone is NOT_FOUND, returned for the task to fail with.
 */
export async function runSetup(
  store: Pick<TaskStore, 'getTask' | 'readJournalPage'>,
  task: TaskRecord,
  journal: readonly JournalEntry[],
  options: { readonly served: RunnerTools; readonly clock: () => number; readonly codeHash: string },
): Promise<RunSetup | CodecallError> {
  const recordedClock = journal.find((e) => e.type === 'clock')?.data.clock;
  const startClock = typeof recordedClock === 'number' ? recordedClock : options.clock();
  const setup: JournalEntryInput[] = [];
  if (typeof recordedClock !== 'number') setup.push({ type: 'clock', data: { clock: startClock } });
  let revision: RevisionCarry | null;
  try {
    revision = await revisionCarry(store, task, journal, (tool) => effectIn(options.served, tool));
  } catch (e) {
    if (e instanceof CodecallError && e.code === 'NOT_FOUND') return e;
    throw e;
  }
  if (revision) setup.push(...revision.setup);
  if (task.input.kind === 'code' && !journal.some((e) => e.type === 'code_block')) {
    setup.push({ type: 'code_block', data: { block: 0, code_hash: options.codeHash } });
  }
  return { setup, startClock, revision };
}

/** The effect of a tool named `namespace.name`, when `tools` serve it. */
function effectIn(tools: RunnerTools, tool: string): ToolEffect | undefined {
  const dot = tool.indexOf('.');
  return dot < 0 ? undefined : tools.get(tool.slice(0, dot), tool.slice(dot + 1))?.effect;
}
