import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { decodeValue } from '../../src/codec/index.ts';
import { callIdOf, eventBetween, isTerminal } from '../../src/spec/index.ts';
import type { JournalEntry, TaskRecord, TaskStatus } from '../../src/spec/index.ts';
import { SKIPPED } from './state-machine-model.ts';
import type { RunLog, TaskModel } from './state-machine-model.ts';
import { SLOW_MS, unsafeRuns } from './state-machine-world.ts';
import type { World } from './state-machine-world.ts';

// Ending a property run: every task is driven to an end, then the run's record is checked.

/** How long every task may take to end once driven (a healthy run needs well under a second per pause). */
export const DRIVE_MS = 5_000;
export const DRIVE_INPUT = 42;
/** Longer than a lease and a few polls: whatever would still move a task has had its chance. */
export const STAY_MS = 300;

/** How the final drive decides what is still open. */
export interface DrivePolicy {
  /** The unsafe calls (by `n`) it rejects; it approves the others. */
  readonly reject: readonly number[];
  /** What it decides for a call in doubt (needs_attention). */
  readonly attention: 'retry' | 'skip';
}

/** Decides, answers, resumes and resolves until every task has ended (or DRIVE_MS passed). */
export async function driveToEnd(
  world: World,
  log: RunLog,
  policy: DrivePolicy = { reject: [], attention: 'retry' },
): Promise<void> {
  const rt = world.via(0);
  const end = Date.now() + DRIVE_MS;
  for (let round = 0; ; round++) {
    const open: string[] = [];
    for (const model of log.tasks) {
      const v = await rt.get(model.id);
      if (!v) throw new Error(`task ${model.id} vanished`);
      if (isTerminal(v.status)) continue;
      open.push(`${model.id}: ${v.status}/${v.pause_reason ?? '-'}`);
      if (v.status !== 'paused') continue;
      const who = { actor: `drive-${round}` };
      log.trace.push(`drive ${model.id} ${v.pause_reason ?? '-'}`);
      switch (v.pause_reason) {
        case 'approval_required': {
          if (v.pending_approvals.length === 0) {
            throw new Error(`${model.id} waits for approval with none pending`);
          }
          const decisions = v.pending_approvals.map((a) => ({
            approvalId: a.id,
            decision: policy.reject.includes((a.arguments as { n: number }).n)
              ? ('reject' as const)
              : ('approve' as const),
          }));
          await rt.decide(model.id, decisions, who);
          for (const d of decisions) model.decisions.set(d.approvalId, d.decision);
          break;
        }
        case 'awaiting_input':
          if (!v.pending_inputs.some((p) => p.name === 'x')) {
            throw new Error(`${model.id} waits for input with none pending`);
          }
          await rt.provideInput(model.id, 'x', DRIVE_INPUT, who);
          model.input = DRIVE_INPUT;
          break;
        case 'needs_attention':
          if (policy.attention === 'skip') {
            await rt.resolveAttention(model.id, { action: 'skip', result: SKIPPED }, who);
            model.skips.push(who.actor);
          } else await rt.resolveAttention(model.id, { action: 'retry' }, who);
          break;
        default:
          await rt.resume(model.id, who);
      }
    }
    if (open.length === 0) return;
    if (Date.now() > end) {
      const dump: string[] = [];
      for (const model of log.tasks) {
        const record = await world.observer.getTask(model.id);
        if (!record || isTerminal(record.status)) continue;
        const journal = await world.observer.readJournal(model.id);
        dump.push(`${model.id} ${JSON.stringify({ ...record, input: undefined, executionLog: undefined })}`);
        for (const e of journal) dump.push(`  ${e.seq} ${e.type} ${JSON.stringify(e.data)}`);
      }
      throw new Error(`tasks did not end within ${DRIVE_MS} ms: ${open.join(', ')}\n${dump.join('\n')}`);
    }
    await sleep(20);
  }
}

/** The result an uninterrupted run with the same decisions returns (`roll` comes from the reference run). */
export function expectedResult(model: TaskModel, journal: readonly JournalEntry[], roll: number): unknown {
  // The call ids of the unsafe calls (approval ids are call ids), from their intents.
  const callOf = new Map<number, string>();
  for (const e of journal) {
    if (e.type !== 'tool_intent' || e.data.tool !== 'tools.unsafe') continue;
    const { n } = decodeValue(String(e.data.args)) as { n: number };
    callOf.set(n, String(callIdOf(e)));
  }
  const skipped = new Set(
    journal
      .filter(
        (e) =>
          e.type === 'attention_decision' &&
          model.skips.includes(String((e.data as { actor?: unknown }).actor)),
      )
      .map((e) => String(callIdOf(e))),
  );
  const calls = [1, 2].map((n) => {
    const id = callOf.get(n) ?? `(no intent for ${n})`;
    // A skip (of a call in doubt) gives the call its result, whatever was decided before.
    if (skipped.has(id)) return SKIPPED;
    const decision = model.decisions.get(id);
    if (decision === undefined) return `(undecided ${id})`;
    return decision === 'reject' ? 'ToolRejectedError:TOOL_REJECTED' : `unsafe:${n}`;
  });
  const x = model.input;
  return {
    a: 'read:a',
    calls: [...calls, `slow:${SLOW_MS}`],
    x,
    b: `read:b${x}`,
    c: 'slow:5',
    spin: 100000,
    roll,
  };
}

function same(a: TaskRecord, b: TaskRecord): boolean {
  return (
    a.status === b.status &&
    a.version === b.version &&
    a.result === b.result &&
    isDeepStrictEqual(a.error, b.error)
  );
}

/** Checks each task's end and journal (runtimes still running, so a late change would show). */
export async function checkEnds(world: World, log: RunLog, roll: number): Promise<void> {
  const ended = new Map<string, TaskRecord>();
  for (const model of log.tasks) {
    const record = await world.observer.getTask(model.id);
    if (!record || !isTerminal(record.status)) throw new Error(`${model.id} is ${record?.status}`);
    ended.set(model.id, record);
  }
  await sleep(STAY_MS);
  for (const model of log.tasks) {
    const id = model.id;
    const record = ended.get(id)!;
    const later = await world.observer.getTask(id);
    if (!later || !same(record, later)) {
      throw new Error(`${id} changed after it ended: ${JSON.stringify(record)} -> ${JSON.stringify(later)}`);
    }
    const journal = await world.observer.readJournal(id);
    checkJournal(id, journal, log);
    const error = record.error?.code ?? '-';
    if (record.status === 'cancelled' && !model.cancelAsked) throw new Error(`${id} cancelled unasked`);
    if (record.status === 'failed' && !model.failedByHuman && error !== 'CRASH_LOOP') {
      throw new Error(`${id} failed: ${error} ${record.error?.message ?? ''}`);
    }
    if (model.failedByHuman && record.status !== 'failed')
      throw new Error(`${id} was failed by a human but is ${record.status}`);
    if (record.status === 'succeeded') {
      const got = decodeValue(record.result ?? 'null');
      const want = expectedResult(model, journal, roll);
      if (!isDeepStrictEqual(got, want)) {
        throw new Error(`${id} returned ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
      }
    }
  }
}

/** Outcomes once per call, each after its intent; refused actions left nothing; unsafe effects not repeated. */
function checkJournal(id: string, journal: readonly JournalEntry[], log: RunLog): void {
  const intents = new Set<string>();
  const outcomes = new Set<string>();
  const retries = new Map<string, number>();
  const approved = new Set<string>();
  const rejected = new Set<string>();
  const started = new Set<string>();
  for (const e of journal) {
    const callId = String(callIdOf(e));
    if (e.type === 'tool_intent') intents.add(callId);
    if (e.type === 'tool_outcome') {
      if (outcomes.has(callId)) throw new Error(`${id}: ${callId} has two outcomes (seq ${e.seq})`);
      if (!intents.has(callId)) throw new Error(`${id}: ${callId} has an outcome before its intent`);
      outcomes.add(callId);
    }
    if (e.type === 'attention_decision' && e.data.action === 'retry') {
      retries.set(callId, (retries.get(callId) ?? 0) + 1);
    }
    if (e.type === 'approval_decision') {
      (e.data.decision === 'approve' ? approved : rejected).add(String(e.data.approval_id));
    }
    if (
      e.type === 'control' &&
      (e.data.action === 'approved_call_started' || e.data.action === 'retry_started')
    ) {
      started.add(callId);
    }
    // Every unsafe tool here needs approval, so a call in doubt is one that was approved (or retried) and started.
    if (e.type === 'control' && e.data.action === 'needs_attention' && !started.has(callId)) {
      throw new Error(`${id}: needs attention for ${callId} (seq ${e.seq}), which never started`);
    }
  }
  const actors = new Set(
    journal.map((e) => (e.data as { actor?: unknown }).actor).filter((a) => typeof a === 'string'),
  );
  for (const r of log.refusals) {
    if (r.taskId === id && actors.has(r.actor))
      throw new Error(`${id}: refused ${r.actor} (${r.code}) was journaled`);
  }
  const runs = new Map<string, number>();
  for (const key of unsafeRuns) {
    if (key.startsWith(`${id}:`))
      runs.set(key.split(':').at(-1)!, (runs.get(key.split(':').at(-1)!) ?? 0) + 1);
  }
  for (const [callId, n] of runs) {
    if (!approved.has(callId)) throw new Error(`${id}: unsafe ${callId} ran without approval`);
    if (rejected.has(callId)) throw new Error(`${id}: unsafe ${callId} ran although rejected`);
    const allowed = 1 + (retries.get(callId) ?? 0);
    if (n > allowed) throw new Error(`${id}: unsafe ${callId} ran ${n} times (${allowed} allowed)`);
  }
}

/** After every runtime stopped: the recorded writes of each task follow the transition table and end it once. */
export function checkWrites(world: World, log: RunLog): void {
  for (const model of log.tasks) {
    const id = model.id;
    const writes = world.recorder.of(id);
    const first = writes[0];
    if (first?.op !== 'create' || first.status !== 'pending')
      throw new Error(`${id}: first write ${JSON.stringify(first)}`);
    let status: TaskStatus = 'pending';
    let version = 0;
    let endedAt: number | null = null;
    for (const w of writes) {
      if (endedAt !== null) {
        throw new Error(`${id}: ${w.op} by ${w.by} (write ${w.seq}) after it ended (write ${endedAt})`);
      }
      if (w.version !== null) {
        if (w.version <= version)
          throw new Error(`${id}: version ${w.version} after ${version} (commit order?)`);
        version = w.version;
      }
      if (w.status === null) continue;
      if (w.status !== status && eventBetween(status, w.status) === null) {
        throw new Error(`${id}: illegal ${status} -> ${w.status} (${w.op} by ${w.by}, write ${w.seq})`);
      }
      status = w.status;
      if (isTerminal(status)) endedAt = w.seq;
    }
    // An accepted cancel: the task's next status other than running is its end (it may have ended first).
    for (const c of model.cancels) {
      const next = writes.find((w) => w.seq > c.at && w.status !== null && w.status !== 'running');
      if (next && !isTerminal(next.status!)) {
        throw new Error(
          `${id}: cancel accepted (returned ${c.returned}) at write ${c.at}, but the task then went ${next.status} (write ${next.seq}, by ${next.by}) instead of ending`,
        );
      }
    }
  }
}
