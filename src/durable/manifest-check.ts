import type {
  JournalEntry,
  JournalEntryData,
  JournalEntryInput,
  Lease,
  TaskRecord,
  TaskStore,
} from '../spec/index.ts';
import { toolManifestHash } from './tool-manifest.ts';
import type { ManifestTools } from './tool-manifest.ts';

/** The tools hash of the last manifest a journal holds, or null (a task that never ran). */
export function journaledToolsHash(journal: readonly JournalEntry[]): string | null {
  for (let i = journal.length - 1; i >= 0; i--) {
    const e = journal[i];
    if (e?.type === 'manifest') return e.data.tools_hash;
  }
  return null;
}

export interface ManifestCheckOptions {
  readonly store: TaskStore;
  readonly lease: Lease;
  readonly journal: readonly JournalEntry[];
  /** The driver's engine and version. */
  readonly engine: string;
  readonly tools: ManifestTools;
  readonly acceptChangedTools: boolean;
  readonly append: (entries: readonly JournalEntryInput[]) => Promise<void>;
}

/**
 * The first run journals the tools and engine; a later run with other tools (names, schemas, effects) or
 * another engine would replay against a different world, so the task pauses for a human unless
 * `acceptChangedTools` (or a human's journaled `accept_changed_tools`) says to go on.
 */
export async function checkManifest(options: ManifestCheckOptions): Promise<TaskRecord | null> {
  const { lease, journal, append } = options;
  const now = { tools_hash: toolManifestHash(options.tools), engine: options.engine };
  let manifestAt = -1;
  let recorded: JournalEntryData['manifest'] | undefined;
  for (let i = journal.length - 1; i >= 0 && manifestAt < 0; i--) {
    const e = journal[i];
    if (e?.type === 'manifest') {
      manifestAt = i;
      recorded = e.data;
    }
  }
  if (!recorded) {
    await append([{ type: 'manifest', data: now }]);
    return null;
  }
  if (recorded.tools_hash === now.tools_hash && recorded.engine === now.engine) return null;
  const what =
    recorded.engine === now.engine
      ? 'the tools changed'
      : `the engine changed (${recorded.engine} -> ${now.engine})`;
  const accepted = journal
    .slice(manifestAt + 1)
    .some((e) => e.type === 'control' && e.data.action === 'accept_changed_tools');
  if (options.acceptChangedTools || accepted) {
    await append([{ type: 'manifest', data: { ...now, accepted: what } }]);
    return null;
  }
  const message = `the journal was written with other tools or another engine: ${what}`;
  return options.store.updateTask(
    lease.taskId,
    {
      status: 'paused',
      pauseReason: 'needs_attention',
      error: { code: 'INCOMPATIBLE_CHECKPOINT', message },
    },
    {
      fencingToken: lease.fencingToken,
      append: [{ type: 'control', data: { action: 'incompatible' } }],
    },
  );
}
