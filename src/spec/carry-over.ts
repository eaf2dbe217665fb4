import { parseCallId } from './call-id.ts';
import type { JournalEntryInput } from './journal.ts';
import type { ToolEffect } from './tool.ts';
import type { CallOrigin, RevisedCallPolicy } from './call-origin.ts';

export type { CallOrigin, RevisedCallPolicy } from './call-origin.ts';

/**
 * A call an earlier attempt completed with a value, offered to a revised program (ADR 0034): a call of the
 * revision with the same tool and the same arguments (canonical form) gets this value instead of running.
 */
export interface CarryOffer {
  readonly origin: CallOrigin;
  readonly tool: string;
  /** The arguments' tagged JSON as journaled. */
  readonly args: string;
  /** The value's tagged JSON as journaled. */
  readonly payload: string;
  /** The tool's effect when offered: a `keyed` or `unsafe` one not taken is reported as not repeated. */
  readonly effect?: ToolEffect;
}

/** What an attempt may take over from earlier ones. */
export interface CarryOver {
  /** Oldest attempt first, each attempt's calls in issue order. */
  readonly offers: readonly CarryOffer[];
  /** `read` and `idempotent` calls run again instead of being taken over (fresh values over reuse). */
  readonly rerunReads?: boolean;
}

/** The default for a tool that says nothing: a call that changes the world waits for a human. */
export function defaultRevisedCallPolicy(effect: ToolEffect): RevisedCallPolicy {
  return effect === 'read' || effect === 'idempotent' ? 'run' : 'pause';
}

export function originKey(origin: CallOrigin): string {
  return origin.task_id === undefined ? origin.call_id : `${origin.task_id}/${origin.call_id}`;
}

/**
 * The calls these entries (one attempt's) completed with a value, in issue order, as offers for a later attempt.
 * A call the attempt itself took over keeps its first origin (it is offered by the attempt where it ran); timers
 * are not tool calls. `taskId` names the entries' task in the origins (absent: the same task).
 */
export function completedCalls(entries: readonly JournalEntryInput[], taskId?: string): CarryOffer[] {
  const intents = new Map<string, { tool: string; args: string; carried: boolean }>();
  const done: { readonly callId: string; readonly payload: string }[] = [];
  for (const entry of entries) {
    if (entry.type === 'tool_intent') {
      const { call_id, tool, args, carried_from } = entry.data;
      intents.set(call_id, { tool, args, carried: carried_from !== undefined });
    } else if (entry.type === 'tool_outcome' && entry.data.ok) {
      done.push({ callId: entry.data.call_id, payload: entry.data.payload });
    }
  }
  const offers: { readonly n: number; readonly offer: CarryOffer }[] = [];
  for (const { callId, payload } of done) {
    const intent = intents.get(callId);
    if (!intent || intent.carried || intent.tool === 'timer') continue;
    const origin = taskId === undefined ? { call_id: callId } : { call_id: callId, task_id: taskId };
    offers.push({ n: issueOrder(callId), offer: { origin, tool: intent.tool, args: intent.args, payload } });
  }
  // Outcomes are journaled in delivery order; offers go in issue order, the order a program asks for them.
  return offers.sort((a, b) => a.n - b.n).map((o) => o.offer);
}

/** A call id's number within its execution (`call-N`, `sK.call-N`), or Infinity when it has none. */
function issueOrder(callId: string): number {
  return parseCallId(callId)?.n ?? Number.POSITIVE_INFINITY;
}

/** The origins of the calls these entries took over from earlier attempts. */
export function carriedOrigins(entries: readonly JournalEntryInput[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries) {
    if (e.type === 'tool_intent' && e.data.carried_from) out.add(originKey(e.data.carried_from));
  }
  return out;
}

/** The offers not taken by an attempt (`carriedOrigins` of its entries): what happened and was not repeated. */
export function notRepeated(offers: readonly CarryOffer[], taken: ReadonlySet<string>): CarryOffer[] {
  return offers.filter((o) => !taken.has(originKey(o.origin)));
}

/** Whether an offer not taken is worth reporting: its call changed the world (an unknown effect counts). */
export function changesTheWorld(offer: CarryOffer): boolean {
  return offer.effect !== 'read' && offer.effect !== 'idempotent';
}

/** The offers with their tools' effects (the tool named `namespace.name`; unknown: left absent). */
export function withEffects(
  offers: readonly CarryOffer[],
  effectOf: (tool: string) => ToolEffect | undefined,
): CarryOffer[] {
  return offers.map((o) => {
    const effect = o.effect ?? effectOf(o.tool);
    return effect === undefined ? o : { ...o, effect };
  });
}

/** The offers a journal holds for its task, a revision (`carry_offer` entries, ADR 0034), in journal order. */
export function journaledOffers(entries: readonly JournalEntryInput[]): CarryOffer[] {
  const out: CarryOffer[] = [];
  for (const e of entries) if (e.type === 'carry_offer') out.push({ ...e.data });
  return out;
}

/**
 * What a revision of the task with these entries is offered: what the task was offered itself (older attempts
 * first), then the calls it completed.
 */
export function offersForRevision(entries: readonly JournalEntryInput[], taskId: string): CarryOffer[] {
  return [...journaledOffers(entries), ...completedCalls(entries, taskId)];
}
