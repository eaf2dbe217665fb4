import { CodecallError } from '../errors/index.ts';
import { journalEntryProblem } from '../spec/index.ts';
import { journalChecksum, journalChecksumOfText } from './journal-checksum.ts';

export interface StoredEntry {
  readonly seq: number;
  readonly type: string;
  readonly data: string;
  readonly checksum: string;
}

/**
 * Walks stored entries in seq order from `firstSeq`, chaining from `prevChecksum`; returns the parsed data of
 * each. The first gap, unparsable row, checksum mismatch or (in the journal) entry that is none of the journal's
 * types is CHECKPOINT_CORRUPT naming that seq: entries are parsed here, once, as they are read.
 */
export function verifyJournal(
  taskId: string,
  rows: readonly StoredEntry[],
  firstSeq: number,
  prevChecksum: string,
  log: 'journal' | 'audit' = 'journal',
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let expectedSeq = firstSeq;
  let prev = prevChecksum;
  for (const row of rows) {
    const corrupt = (why: string): CodecallError =>
      new CodecallError(
        'CHECKPOINT_CORRUPT',
        `${log === 'journal' ? 'Journal' : 'Audit log'} of task ${taskId} is corrupt at seq ${expectedSeq}: ${why}`,
        { details: { taskId, seq: expectedSeq, log } },
      );
    if (row.seq !== expectedSeq) throw corrupt('entry missing');
    let data: unknown;
    try {
      data = JSON.parse(row.data);
    } catch {
      throw corrupt('data is not JSON');
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data))
      throw corrupt('data is not an object');
    // Stores keep the canonical text that was hashed, so hashing it as stored verifies the entry without
    // re-canonicalizing its data (most of a resume's read time); other text gets the full check.
    const asStored = journalChecksumOfText(prev, row.seq, row.type, row.data) === row.checksum;
    if (!asStored && journalChecksum(prev, row.seq, row.type, data) !== row.checksum)
      throw corrupt('checksum mismatch');
    const problem = log === 'journal' ? journalEntryProblem(row.type, data) : null;
    if (problem !== null) throw corrupt(problem);
    out.push(data as Record<string, unknown>);
    prev = row.checksum;
    expectedSeq++;
  }
  return out;
}
