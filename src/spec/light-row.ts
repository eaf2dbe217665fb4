import { createHash } from 'node:crypto';
import { isRecord } from './is-record.ts';
import type { JournalEntry } from './journal.ts';

/**
 * A row a view shows whose data is over this many characters is not read by views (ADR 0035, 0036): the summary
 * keeps it light instead, so a view of a task with many big pending requests costs what it shows.
 */
export const MAX_VIEW_ROW_CHARS = 16 * 1024;
/** In a light row, a string field over this many characters is given as its size and digest. */
export const LIGHT_FIELD_CHARS = 1024;

/**
 * A shown row kept in the summary: its type, time and data, each string field over LIGHT_FIELD_CHARS replaced by
 * the JSON text of `{ truncated: true, bytes, sha256 }` (what a view shows of a big value, as tagged JSON decodes
 * it). GET .../events/{seq} gives the row whole.
 */
export interface LightRow {
  readonly type: JournalEntry['type'];
  readonly createdAt: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** True when a row's data is over MAX_VIEW_ROW_CHARS (counted over its string fields, where big values are). */
export function isBigRow(entry: JournalEntry): boolean {
  let size = 0;
  for (const v of Object.values(entry.data as unknown as Record<string, unknown>)) {
    size += typeof v === 'string' ? v.length : 0;
  }
  return size > MAX_VIEW_ROW_CHARS;
}

/** The light form of a shown row whose data is big; undefined for a small one (views read it). */
export function lightRow(entry: JournalEntry): LightRow | undefined {
  if (!isBigRow(entry)) return undefined;
  const data = entry.data as unknown as Record<string, unknown>;
  const light: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    light[k] =
      typeof v === 'string' && v.length > LIGHT_FIELD_CHARS
        ? JSON.stringify({
            truncated: true,
            bytes: Buffer.byteLength(v),
            sha256: createHash('sha256').update(v).digest('hex'),
          })
        : v;
  }
  return { type: entry.type, createdAt: entry.createdAt, data: light };
}

/** The row a view shows in place of the journal's (checksum empty: it is the summary's, not the chain's). */
export function lightEntry(taskId: string, seq: number, row: LightRow): JournalEntry {
  return {
    taskId,
    seq,
    checksum: '',
    createdAt: row.createdAt,
    type: row.type,
    data: row.data,
  } as JournalEntry;
}

export function isLightRow(v: unknown): v is LightRow {
  return isRecord(v) && typeof v.type === 'string' && typeof v.createdAt === 'string' && isRecord(v.data);
}
