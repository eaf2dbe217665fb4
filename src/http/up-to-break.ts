import { isCodecallError } from '../errors/index.ts';

export interface BreakMark {
  readonly code: 'CHECKPOINT_CORRUPT';
  readonly message: string;
  /** The first seq of the log that failed its check. */
  readonly seq: number;
}

/**
 * A page of a verified log (journal or audit) read up to where its chain breaks: the entries after `after` and
 * before the broken seq, and the break itself (null when the page is whole). Other errors are thrown.
 */
export async function upToBreak<T>(
  read: (limit: number) => Promise<T[]>,
  after: number,
  limit: number,
): Promise<{ entries: T[]; corrupt: BreakMark | null }> {
  try {
    return { entries: await read(limit), corrupt: null };
  } catch (e) {
    const seq = isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT' ? e.details.seq : undefined;
    if (!isCodecallError(e) || typeof seq !== 'number') throw e;
    const before = Math.min(limit, seq - 1 - after);
    return {
      entries: before > 0 ? await read(before) : [],
      corrupt: { code: 'CHECKPOINT_CORRUPT', message: e.message, seq },
    };
  }
}
