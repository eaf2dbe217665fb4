import { CodecallError } from '../errors/index.ts';
import { journaledOffers, offersForRevision, readJournalPaged, withEffects } from '../spec/index.ts';
import type {
  CarryOver,
  JournalEntry,
  JournalEntryInput,
  TaskRecord,
  TaskStore,
  ToolEffect,
} from '../spec/index.ts';

/** A revision's offers and the entries that journal them (empty once journaled). */
export interface RevisionCarry {
  readonly setup: readonly JournalEntryInput[];
  readonly carry: CarryOver;
}

/**
 * The calls a revision task may take over (ADR 0034). Its first run reads them from the task it revises and
 * journals them (`carry_offer`, before its code block): from then on the revision's own journal says what it was
 * offered, so a resume matches exactly as the first run did, whatever happens to the earlier task.
 */
export async function revisionCarry(
  store: Pick<TaskStore, 'getTask' | 'readJournalPage'>,
  task: TaskRecord,
  journal: readonly JournalEntry[],
  effectOf: (tool: string) => ToolEffect | undefined,
): Promise<RevisionCarry | null> {
  const { input } = task;
  if (input.kind !== 'code' || input.revisionOf === undefined) return null;
  const rerunReads = input.rerunReads === true ? { rerunReads: true } : {};
  if (journal.some((e) => e.type === 'code_block')) {
    return { setup: [], carry: { offers: journaledOffers(journal), ...rerunReads } };
  }
  const source = await store.getTask(input.revisionOf);
  if (!source || source.tenant !== task.tenant) {
    throw new CodecallError('NOT_FOUND', `task ${input.revisionOf}, which this task revises, is gone`, {
      details: { task_id: input.revisionOf },
    });
  }
  const offers = withEffects(
    offersForRevision(await readJournalPaged(store, source.id), source.id),
    effectOf,
  );
  return {
    setup: offers.map((data) => ({ type: 'carry_offer', data })),
    carry: { offers, ...rerunReads },
  };
}
