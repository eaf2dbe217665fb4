import type { AuditEntry, JournalEntry } from '../spec/index.ts';

export interface TaskEvent {
  /** `journal`: what the program did and what humans decided; `audit`: status changes and who made them. */
  readonly source: 'journal' | 'audit';
  readonly seq: number;
  readonly type: string;
  readonly data: unknown;
  readonly created_at: string;
}

/**
 * The journal and the audit log as one ordered list: an audit link records how far the journal was when it was
 * written (`journal_seq`), so it goes right after that journal entry. The cursor `J-A` is the last journal and
 * audit seq returned. The lists may be cut short (store-side paging) as long as each holds one more entry than a
 * page: no entry missing from either can then belong among the first `limit`.
 */
export function mergedEvents(
  journal: readonly JournalEntry[],
  audit: readonly AuditEntry[],
  page: { afterJournal: number; afterAudit: number; limit: number },
): { events: TaskEvent[]; next_after: string | null } {
  const { afterJournal: afterJ, afterAudit: afterA } = page;
  const events: TaskEvent[] = [];
  let a = 0;
  const pushAudit = (upTo: number): void => {
    for (; a < audit.length; a++) {
      const entry = audit[a];
      if (!entry || Number(entry.data.journal_seq ?? 0) > upTo) break;
      if (entry.seq > afterA) events.push(view('audit', entry));
    }
  };
  // Audit links made before the first journal entry of this page come first.
  pushAudit(afterJ);
  for (const entry of journal) {
    if (entry.seq > afterJ) events.push(view('journal', entry));
    pushAudit(entry.seq);
  }
  pushAudit(Number.MAX_SAFE_INTEGER);
  const slice = events.slice(0, page.limit);
  if (events.length <= page.limit) return { events: slice, next_after: null };
  let j = afterJ;
  let au = afterA;
  for (const e of slice) {
    if (e.source === 'journal') j = e.seq;
    else au = e.seq;
  }
  return { events: slice, next_after: `${j}-${au}` };
}

function view(source: TaskEvent['source'], e: JournalEntry | AuditEntry): TaskEvent {
  return { source, seq: e.seq, type: e.type, data: e.data, created_at: e.createdAt };
}
