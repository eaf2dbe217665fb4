import { CodecallError } from '../errors/index.ts';
import type { JournalEntry, JournalEntryInput } from '../spec/index.ts';

/** Runs in a row that may end without any journaled progress before the task fails with CRASH_LOOP. */
export const DEFAULT_MAX_STALLED_ATTEMPTS = 3;

/**
 * Every claim journals an `attempt`. A run that makes progress (journals anything) or ends cleanly (a pause
 * journals a control entry) resets the count; a run whose worker dies first leaves its attempt as the last
 * entry. After `max` such attempts in a row the task fails instead of taking workers down forever.
 */
export function nextAttempt(
  journal: readonly JournalEntry[],
  max: number,
): { entry: JournalEntryInput } | { error: CodecallError } {
  let last = -1;
  let previous: { readonly seq: number; readonly stalled: number } | undefined;
  for (let i = journal.length - 1; i >= 0; i--) {
    const e = journal[i];
    if (e?.type === 'control' && e.data.action === 'attempt') {
      last = i;
      previous = { seq: e.seq, stalled: e.data.stalled };
      break;
    }
  }
  const progressed = last < 0 || last < journal.length - 1;
  const stalled = progressed ? 0 : (previous?.stalled ?? 0) + 1;
  if (stalled >= max) {
    return {
      error: new CodecallError(
        'CRASH_LOOP',
        `the task's last ${stalled + 1} runs ended without progress (its worker died each time); giving up`,
        { details: { attempts: stalled + 1, last_seq: previous?.seq ?? null } },
      ),
    };
  }
  return { entry: { type: 'control', data: { action: 'attempt', stalled } } };
}
