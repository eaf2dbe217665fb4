import { carriedOrigins, changesTheWorld, journaledOffers, notRepeated } from '../spec/index.ts';
import type { CallOrigin, JournalEntry, TaskInput } from '../spec/index.ts';
import type { RevisionView } from '../api/index.ts';
import { viewValue } from './view-value.ts';

/** An origin as views show it: only its two fields, whatever else the entry held. */
export function originView(o: CallOrigin): CallOrigin {
  return o.task_id === undefined ? { call_id: o.call_id } : { task_id: o.task_id, call_id: o.call_id };
}

/** Calls this journal took over instead of running (`tool_intent` with `carried_from`). */
export function carriedCalls(journal: readonly JournalEntry[]): number {
  let n = 0;
  for (const e of journal) if (e.type === 'tool_intent' && e.data.carried_from) n++;
  return n;
}

/**
 * What a revision took over, from its journal (the one a view has read already); null for a task that revises
 * none. Without the journal (a list), the counts are 0 and no call is listed.
 */
export function revisionView(input: TaskInput, journal?: readonly JournalEntry[]): RevisionView | null {
  if (input.kind !== 'code' || input.revisionOf === undefined) return null;
  const offers = journal ? journaledOffers(journal) : [];
  const taken = journal ? carriedOrigins(journal) : new Set<string>();
  return {
    revision_of: input.revisionOf,
    rerun_reads: input.rerunReads === true,
    offered: offers.length,
    carried: journal ? carriedCalls(journal) : 0,
    not_repeated: notRepeated(offers, taken)
      .filter(changesTheWorld)
      .map((o) => ({ origin: originView(o.origin), tool: o.tool, arguments: viewValue(o.args) })),
  };
}
