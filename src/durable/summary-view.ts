import type { AttentionCallData, ViewJournal } from '../spec/index.ts';
import { inputRequestParts } from './journal-state.ts';
import type { AttentionCall, PendingInput } from './journal-state.ts';
import { approvalOf } from './pending-approvals.ts';
import type { PendingApproval } from './pending-approvals.ts';
import { viewValue } from './view-value.ts';

// The parts of a task's view that come from its journal, read from its summary and the rows it names (ADR 0035):
// what the journal-wide functions (pendingApprovals, pendingInputs, attentionCalls) give, with arguments over
// MAX_VIEW_VALUE_CHARS shown by their size and digest (GET .../events/{seq} gives the entry in full).

/** Pending approvals, in the order asked. */
export function viewApprovals(journal: ViewJournal): PendingApproval[] {
  return journal.summary.approvals.flatMap((a) => {
    const row = journal.rows.get(a.seq);
    return row?.type === 'approval_request' ? [approvalOf(row, viewValue)] : [];
  });
}

/** Input waits without an answer, oldest first. */
export function viewInputs(journal: ViewJournal): PendingInput[] {
  return journal.summary.inputs.map((i) => {
    const row = journal.rows.get(i.seq);
    const parts = row?.type === 'input_request' ? inputRequestParts(row.data) : {};
    return { callId: i.callId, name: i.name, deadline: i.deadline, ...parts };
  });
}

/** The calls of the last needs_attention pause still without a decision, in the order raised. */
export function viewAttentionCalls(journal: ViewJournal): AttentionCall[] {
  const attention = journal.summary.attention;
  const row = attention === null ? undefined : journal.rows.get(attention.seq);
  if (attention === null || row?.type !== 'control' || row.data.action !== 'needs_attention') return [];
  const { call_id: callId, tool, args } = row.data;
  // Older journals name one call; newer ones list them all (the first is also call_id).
  const raised: readonly (Omit<AttentionCallData, 'args'> & { args: unknown })[] =
    row.data.calls ?? (typeof callId === 'string' ? [{ call_id: callId, tool: String(tool), args }] : []);
  const decided = new Set(attention.decided);
  return raised
    .filter((c) => !decided.has(c.call_id))
    .map((c) => ({
      callId: c.call_id,
      tool: String(c.tool),
      arguments: typeof c.args === 'string' ? viewValue(c.args) : null,
      ...(typeof c.earlier?.args === 'string'
        ? {
            earlier: { origin: c.earlier.origin, tool: c.earlier.tool, arguments: viewValue(c.earlier.args) },
          }
        : {}),
    }));
}
