import type { CallOrigin, TaskInput, ViewJournal } from '../spec/index.ts';
import type { RevisionView } from '../api/index.ts';
import { viewValue } from './view-value.ts';

/** An origin as views show it: only its two fields, whatever else the entry held. */
export function originView(o: CallOrigin): CallOrigin {
  return o.task_id === undefined ? { call_id: o.call_id } : { task_id: o.task_id, call_id: o.call_id };
}

/**
 * What a revision took over, from its journal's summary and the offer rows it names (ADR 0034, 0035); null for a
 * task that revises none. Without the journal (a list), the counts are 0 and no call is listed.
 */
export function revisionView(input: TaskInput, journal?: ViewJournal): RevisionView | null {
  if (input.kind !== 'code' || input.revisionOf === undefined) return null;
  const summary = journal?.summary;
  return {
    revision_of: input.revisionOf,
    rerun_reads: input.rerunReads === true,
    offered: summary?.offered ?? 0,
    carried: summary?.carried ?? 0,
    not_repeated: (summary?.notRepeated ?? []).flatMap((o) => {
      const row = journal?.rows.get(o.seq);
      if (row?.type !== 'carry_offer') return [];
      return [
        { origin: originView(row.data.origin), tool: row.data.tool, arguments: viewValue(row.data.args) },
      ];
    }),
  };
}
