import { CodecallError, isCodecallError } from '../errors/index.ts';
import type {
  GuestLanguage,
  JournalEntry,
  JournalEntryInput,
  SandboxDriver,
  TaskAgent,
  TaskRecord,
  TaskStore,
} from '../spec/index.ts';
import { isBodyStore } from '../spec/index.ts';
import { nextAttempt } from './crash-loop.ts';
import { checkTaskInput, codeHashOf } from './journal-state.ts';
import { checkManifest, journaledToolsHash } from './manifest-check.ts';
import { deadlineExceeded } from './retry-and-deadline.ts';
import type { TaskRun } from './task-run.ts';
import type { ManifestTools } from './tool-manifest.ts';
import type { KeptJournal } from './paused-vms.ts';
import { readRunJournal } from './resume-journal.ts';
import type { JournalRead } from './resume-journal.ts';

/**
 * A check's answer: go on (journaling `journal` just before the run, if given), fail the task with `error`, or
 * the check has settled the task itself (`task` is its record now).
 */
export type Verdict = { readonly kind: 'go'; readonly journal?: readonly JournalEntryInput[] } | Stop;

export type Stop =
  | { readonly kind: 'fail'; readonly error: CodecallError }
  | { readonly kind: 'settled'; readonly task: TaskRecord };

const GO: Verdict = { kind: 'go' };

const fail = (error: CodecallError): Stop => ({ kind: 'fail', error });

/** What the checks may use besides the task: the runner's settings and the run. */
export interface PreRunEnv {
  readonly store: TaskStore;
  readonly run: TaskRun;
  readonly drivers: readonly SandboxDriver[];
  readonly tools: ManifestTools;
  /** The tools of an earlier manifest, when still served (`RunnerTools.forManifest`): checked instead of `tools`. */
  readonly forManifest?: (toolsHash: string) => ManifestTools | undefined;
  readonly agent: TaskAgent | undefined;
  readonly acceptChangedTools: boolean;
  readonly maxStalledAttempts: number;
  readonly clock: () => number;
  /** The journal kept with the task's paused VM (ADR 0056): then only the entries after it are read. */
  readonly keptJournal?: KeptJournal | undefined;
  /** Keep the journal as the run reads and writes it, up to this many appended bytes (for a paused VM to keep). */
  readonly trackJournalBytes?: number;
  /** Told how the journal was read. */
  readonly onJournalRead?: (read: JournalRead) => void;
}

/** The claimed task with what was found before the checks on it: its journal and the driver that runs it. */
export interface FoundRun {
  readonly task: TaskRecord;
  readonly journal: JournalEntry[];
  /** The language the driver runs: function calls run as a generated JavaScript program, whatever the task names. */
  readonly language: GuestLanguage;
  readonly driver: SandboxDriver;
  readonly codeHash: string;
}

/** A run every check let go on. */
export interface PreparedRun extends FoundRun {
  readonly kind: 'run';
  /** What the checks asked to journal before the run (the attempt, last). */
  readonly journalBefore: readonly JournalEntryInput[];
}

type Check<T> = (subject: T, env: PreRunEnv) => Verdict | Promise<Verdict>;

/** A pause or cancel asked for a run whose worker died takes effect without running anything. */
const requestedControl: Check<TaskRecord> = async (task, { store, run }) => {
  if (task.requestedAction === null) return GO;
  const cancel = task.requestedAction === 'cancel';
  const settled = await store.updateTask(
    task.id,
    cancel
      ? { status: 'cancelled', error: { code: 'CANCELLED', message: 'cancelled by request' } }
      : { status: 'paused', pauseReason: 'user_request' },
    { ...run.fenced, append: [{ type: 'control', data: { action: cancel ? 'cancel' : 'pause' } }] },
  );
  return { kind: 'settled', task: settled };
};

const beforeDeadline: Check<TaskRecord> = (task, { clock }) =>
  task.deadlineAt !== null && clock() >= task.deadlineAt ? fail(deadlineExceeded(task)) : GO;

/** The checks on the record alone, in order, before its journal is read. */
const RECORD_CHECKS: readonly Check<TaskRecord>[] = [requestedControl, beforeDeadline];

/** The journal was begun for this very input (code, instruction, language). */
const sameInput: Check<FoundRun> = (p) => {
  const mismatch = checkTaskInput(p.task, p.journal, p.codeHash);
  return mismatch ? fail(mismatch) : GO;
};

/** Counts this attempt; too many runs in a row died without progress (CRASH_LOOP). */
const notCrashLooping: Check<FoundRun> = (p, { maxStalledAttempts }) => {
  const attempt = nextAttempt(p.journal, maxStalledAttempts);
  return 'error' in attempt ? fail(attempt.error) : { kind: 'go', journal: [attempt.entry] };
};

/** The tools a task runs with: those its journal's manifest names when still served, else the current ones. */
export function toolsOfJournal<T>(
  journal: readonly JournalEntry[],
  tools: T,
  forManifest: ((toolsHash: string) => T | undefined) | undefined,
): T {
  const hash = journaledToolsHash(journal);
  return (hash === null ? undefined : forManifest?.(hash)) ?? tools;
}

/** The tools and engine are those the journal was written with, or a human accepted the change. */
const sameManifest: Check<FoundRun> = async (p, env) => {
  const incompatible = await checkManifest({
    store: env.store,
    lease: env.run.lease,
    journal: p.journal,
    engine: p.driver.engine,
    tools: toolsOfJournal(p.journal, env.tools, env.forManifest),
    acceptChangedTools: env.acceptChangedTools,
    append: async (entries) => void (await env.run.append(entries)),
  });
  return incompatible ? { kind: 'settled', task: incompatible } : GO;
};

const modelConfigured: Check<FoundRun> = (p, { agent }) =>
  p.task.input.kind === 'instruction' && !agent
    ? fail(new CodecallError('MODEL_NOT_CONFIGURED', 'this runner has no model for instruction tasks'))
    : GO;

/** The checks on the task with its journal and driver, in order. */
const RUN_CHECKS: readonly Check<FoundRun>[] = [sameInput, notCrashLooping, sameManifest, modelConfigured];

/** Runs `checks` in order until one stops; collects what those that go on ask to journal. */
async function firstStop<T>(
  checks: readonly Check<T>[],
  subject: T,
  env: PreRunEnv,
  journalBefore: JournalEntryInput[],
): Promise<Stop | null> {
  for (const check of checks) {
    const verdict = await check(subject, env);
    if (verdict.kind !== 'go') return verdict;
    if (verdict.journal) journalBefore.push(...verdict.journal);
  }
  return null;
}

/**
 * Runs the checks before a run, in order: the first that does not go on stops the run before it starts. In
 * between, reads the journal (a damaged one fails the task) and picks the driver (none: SANDBOX_UNAVAILABLE).
 */
export async function prepareRun(task: TaskRecord, env: PreRunEnv): Promise<PreparedRun | Stop> {
  const journalBefore: JournalEntryInput[] = [];
  const stop = await firstStop(RECORD_CHECKS, task, env, journalBefore);
  if (stop) return stop;
  let journal: JournalEntry[];
  try {
    // In pages: a resume of a big journal must not hold the event loop for the whole read (ADR 0029).
    const read = await readRunJournal(env.store, task.id, env.keptJournal);
    journal = read.journal;
    env.onJournalRead?.(read.read);
    // What the run appends from here on joins it, so a paused VM can keep the journal up to its mark.
    if (env.trackJournalBytes !== undefined) env.run.track(journal, env.trackJournalBytes);
  } catch (e) {
    if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return fail(e);
    throw e;
  }
  // An earlier attempt may have died mid-body: its upload's rows go (no other runner writes the task's bodies now).
  if (isBodyStore(env.store) && journal.some((e) => e.type === 'control' && e.data.action === 'attempt')) {
    await env.store.sweepUploads(task.id);
  }
  const fc = task.input.kind === 'instruction' && task.input.mode === 'function_calling';
  const language = fc ? 'javascript' : task.input.language;
  const driver = env.drivers.find((d) => d.languages.includes(language));
  if (!driver) {
    return fail(
      new CodecallError('SANDBOX_UNAVAILABLE', `no sandbox driver here runs ${language}`, {
        details: { drivers: env.drivers.map((d) => d.name) },
      }),
    );
  }
  const found: FoundRun = { task, journal, language, driver, codeHash: codeHashOf(task) };
  return (await firstStop(RUN_CHECKS, found, env, journalBefore)) ?? { kind: 'run', ...found, journalBefore };
}
