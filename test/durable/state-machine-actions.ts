import { setTimeout as sleep } from 'node:timers/promises';
import { isCodecallError } from '../../src/errors/index.ts';
import { isTerminal } from '../../src/spec/index.ts';
import type { JournalEntry } from '../../src/spec/index.ts';
import {
  approvalIds,
  expectedAfter,
  MAX_TASKS,
  newTaskModel,
  predict,
  REFUSAL_CODES,
  SKIPPED,
} from './state-machine-model.ts';
import type { Action, RunLog, TaskModel } from './state-machine-model.ts';
import { PROGRAM, SEED } from './state-machine-world.ts';
import type { World } from './state-machine-world.ts';
import type { Runtime, TaskView } from '../../src/api/index.ts';

// Applying one action of the state-machine property to the world, checking its outcome and noting in the model
// what was accepted.

/** How long `settle` waits for a task to pause or end. */
export const SETTLE_MS = 400;

function perform(action: Action, rt: Runtime, id: string, ids: string[], actor: string): Promise<TaskView> {
  const who = { actor };
  switch (action.kind) {
    case 'pause':
      return rt.pause(id, who);
    case 'resume':
      return rt.resume(id, who);
    case 'cancel':
      return rt.cancel(id, who);
    case 'decide':
      return rt.decide(
        id,
        ids.map((approvalId) => ({ approvalId, decision: action.decision })),
        who,
      );
    case 'input':
      return rt.provideInput(id, action.name, action.value, who);
    case 'attention':
      return rt.resolveAttention(
        id,
        action.action === 'skip' ? { action: 'skip', result: SKIPPED } : { action: action.action },
        who,
      );
    default:
      throw new Error(`not a task action: ${action.kind}`);
  }
}

/** Actions that do not act on a task. Returns the trace line, or null for a task action. */
async function applyWorldAction(world: World, log: RunLog, action: Action): Promise<string | null> {
  switch (action.kind) {
    case 'wait':
      await sleep(action.ms);
      return 'waited';
    case 'settle': {
      // Until the task is paused or ended (or SETTLE_MS passed), so actions meet every kind of pause.
      const model = log.tasks[action.task % Math.max(1, log.tasks.length)];
      const end = Date.now() + SETTLE_MS;
      let status = '-';
      while (model && Date.now() < end) {
        const r = await world.observer.getTask(model.id);
        status = `${r?.status ?? '?'}/${r?.pauseReason ?? '-'}`;
        if (r && (r.status === 'paused' || isTerminal(r.status))) break;
        await sleep(10);
      }
      return `settled ${status}`;
    }
    case 'crash':
      await world.crash(action.which, action.afterWrites);
      return 'crashing';
    case 'restart':
      await world.restart(action.which);
      return 'restarted';
    case 'submit': {
      if (log.tasks.length >= MAX_TASKS) return 'skipped (enough tasks)';
      const view = await world.via(action.via).submit({ code: PROGRAM, seed: SEED });
      if (view.status !== 'pending') throw new Error(`a submitted task is ${view.status}`);
      log.tasks.push(newTaskModel(view.task_id));
      return `submitted ${view.task_id}`;
    }
    default:
      return null;
  }
}

/** Applies one action, checks its outcome, and notes what was accepted. */
export async function applyAction(world: World, log: RunLog, action: Action, index: number): Promise<void> {
  const say = (s: string): void => void log.trace.push(`#${index} ${JSON.stringify(action)} -> ${s}`);
  const done = await applyWorldAction(world, log, action);
  if (done !== null) return say(done);
  if (!('via' in action) || !('task' in action)) return;
  const actor = `actor-${index}`;
  const model = log.tasks[action.task % Math.max(1, log.tasks.length)];
  if (!model) return say('skipped (no task)');
  const node = world.node(action.via);
  const before = await world.observer.getTask(model.id);
  const view = await node.runtime.get(model.id);
  const journalBefore = (await world.observer.readJournal(model.id)).length;
  const after1 = await world.observer.getTask(model.id);
  if (!before || !view || !after1) throw new Error(`task ${model.id} vanished`);
  // Paused or ended, and unchanged while we looked: nothing but this action can move it now.
  const stable =
    (before.status === 'paused' || isTerminal(before.status)) && after1.version === before.version;
  const ids = action.kind === 'decide' ? approvalIds(action, view) : [];
  const predicted = stable ? predict(action, view, ids) : null;
  if (action.kind === 'decide' && action.crashAfter !== null)
    await world.crash(action.via, action.crashAfter);
  const at = world.recorder.position;
  let outcome: string;
  let result: TaskView | null = null;
  try {
    result = await perform(action, node.runtime, model.id, ids, actor);
    outcome = 'accept';
  } catch (e) {
    if (isCodecallError(e) && e.code === 'STORE_CLOSED' && node.store.crashed) outcome = 'died';
    else if (isCodecallError(e) && REFUSAL_CODES.includes(e.code)) outcome = e.code;
    else {
      say(`threw ${String(e)}`);
      throw e;
    }
  }
  const was = `${before.status}/${before.pauseReason ?? '-'}`;
  say(
    `${outcome}${result ? ` (${result.status}/${result.pause_reason ?? '-'})` : ''} [was ${was}${stable ? ', stable' : ''}]`,
  );
  if (outcome === 'died') {
    // The runtime died while acting: what it committed is in the journal under this actor.
    return noteJournaled(model, action, actor, await world.observer.readJournal(model.id));
  }
  if (predicted !== null && outcome !== predicted) {
    throw new Error(`${action.kind} on a ${was} task: expected ${predicted}, got ${outcome}`);
  }
  if (outcome !== 'accept') {
    log.refusals.push({ taskId: model.id, actor, code: outcome });
    if (stable) {
      const now = await world.observer.getTask(model.id);
      const journalNow = (await world.observer.readJournal(model.id)).length;
      if (now?.version !== before.version || journalNow !== journalBefore) {
        throw new Error(`a refused ${action.kind} changed task ${model.id}`);
      }
    }
    return;
  }
  if (stable && result && result.status !== expectedAfter(action, view)) {
    throw new Error(
      `${action.kind} on a ${was} task returned ${result.status}, expected ${expectedAfter(action, view)}`,
    );
  }
  if (action.kind === 'decide') for (const id of ids) model.decisions.set(id, action.decision);
  if (action.kind === 'input') model.input = action.value;
  if (action.kind === 'attention' && action.action === 'skip') model.skips.push(actor);
  if (action.kind === 'attention' && action.action === 'fail') model.failedByHuman = true;
  if (action.kind === 'cancel') {
    model.cancelAsked = true;
    model.cancels.push({ at, returned: result?.status ?? 'running' });
  }
}

/** An action whose runtime died before answering: it took effect as far as its journal entries say. */
function noteJournaled(
  model: TaskModel,
  action: Action,
  actor: string,
  journal: readonly JournalEntry[],
): void {
  const mine = journal.filter((e) => (e.data as { actor?: unknown }).actor === actor);
  // A cancel of a running task asks its runner through the store and journals nothing until it takes effect.
  if (action.kind === 'cancel') model.cancelAsked = true;
  for (const e of mine) {
    if (e.type === 'approval_decision') {
      model.decisions.set(String(e.data.approval_id), e.data.decision === 'approve' ? 'approve' : 'reject');
    }
    if (e.type === 'input_provided' && action.kind === 'input') model.input = action.value;
    if (e.type === 'attention_decision' && e.data.action === 'skip') model.skips.push(actor);
    if (e.type === 'control' && e.data.action === 'fail') model.failedByHuman = true;
  }
}
