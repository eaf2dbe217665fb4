import { sha256Hex } from '../codec/index.ts';
import type { AuditEntry, JournalEntry } from '../spec/index.ts';

export interface TaskEvent {
  /** `journal`: what the program did and what humans decided; `audit`: status changes and who made them. */
  readonly source: 'journal' | 'audit';
  readonly seq: number;
  readonly type: string;
  readonly data: unknown;
  readonly created_at: string;
  /** The fields of `data` that were too big for a page, each given as `{ truncated, bytes, sha256 }`. */
  readonly truncated?: readonly string[];
}

/** A field of an entry's data over this many characters (as JSON) is summarised in a page of events. */
export const MAX_EVENT_FIELD_CHARS = 16 * 1024;

/** What a page of events holds of a field too big for it: its size and digest (GET .../events/{seq} has it). */
export interface TruncatedField {
  readonly truncated: true;
  /** UTF-8 bytes of the field: the string itself, or the JSON text of any other value. */
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * The event with each top-level field of its data over MAX_EVENT_FIELD_CHARS replaced by its size and digest,
 * so a page costs what it shows: the entry's shape (call ids, types, flags) stays for the timeline.
 */
export function summarised(event: TaskEvent): TaskEvent {
  const data = event.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return event;
  let out: Record<string, unknown> | null = null;
  const truncated: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (text === undefined || text.length <= MAX_EVENT_FIELD_CHARS) continue;
    out ??= { ...(data as Record<string, unknown>) };
    const field: TruncatedField = {
      truncated: true,
      bytes: Buffer.byteLength(text),
      sha256: sha256Hex(text),
    };
    out[key] = field;
    truncated.push(key);
  }
  return out === null ? event : { ...event, data: out, truncated };
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
  page: {
    afterJournal: number;
    afterAudit: number;
    limit: number;
    /** The journal list was cut short by the page's byte budget: the page ends after its last entry. */
    journalCut?: boolean;
  },
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
  // Audit links after the last journal entry of a cut list may belong after entries not read yet.
  if (page.journalCut !== true) pushAudit(Number.MAX_SAFE_INTEGER);
  const slice = events.slice(0, page.limit);
  if (events.length <= page.limit && page.journalCut !== true) return { events: slice, next_after: null };
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
