import type { ExecutionRequest, ExecutionResult, JournalEntryInput, SandboxDriver } from '../spec/index.ts';
import { PAUSED_VM_CODES } from '../spec/index.ts';
import { lastMark, requestFingerprint, resumableFrom } from './paused-check.ts';
import type { PausedVms } from './paused-vms.ts';

/** What of a journaled execution's options (run-journaled.ts) its paused VM depends on. */
export interface PausedRunOptions {
  readonly pausedVms?: PausedVms;
  readonly driver: SandboxDriver;
  readonly request: Omit<ExecutionRequest, 'host' | 'clock'>;
  readonly startClock: number;
  readonly sizes?: unknown;
  readonly journal: {
    readonly recorded: readonly JournalEntryInput[];
    readonly append: (entries: readonly JournalEntryInput[]) => Promise<void | readonly JournalEntryInput[]>;
    readonly keyPrefix?: string;
    readonly journalId?: (callId: string) => string;
  };
}

/** One execution's part in keeping and resuming paused VMs (ADR 0056). */
export interface PausedRun {
  /** The kept VM it resumes, checked against the journal, with the outcomes its guest was handed already. */
  readonly resumed: { readonly delivered: number } | null;
  /** What the request adds: keep the VM on a pause, and resume the kept one. */
  readonly request: Pick<ExecutionRequest, 'keepPausedVm' | 'resumeFrom'>;
  /** The journal's append, noting the last entry stored. */
  readonly append: (entries: readonly JournalEntryInput[]) => Promise<void>;
  /** The execution's result as the caller sees it: a pause keeps its VM; a resume's logs begin with the earlier. */
  settle(result: ExecutionResult): ExecutionResult;
}

/** Null when the run keeps no VM: no store of them, no key, or a driver that cannot. */
export function pausedRun(options: PausedRunOptions): PausedRun | null {
  const { pausedVms, journal, driver, request } = options;
  const key = journal.keyPrefix;
  if (!pausedVms || key === undefined || !driver.keepsPausedVms) return null;
  const fingerprint = requestFingerprint(request, {
    engine: driver.engine,
    startClock: options.startClock,
    sizes: options.sizes,
  });
  const kept = pausedVms.take(key);
  const resumed = kept
    ? resumableFrom(kept, {
        driver,
        fingerprint,
        recorded: journal.recorded,
        journalId: journal.journalId ?? ((id) => id),
      })
    : null;
  if (kept) pausedVms.noteResume(resumed ? 'resumed' : 'stale');
  else if (journal.recorded.length > 0) pausedVms.noteResume('missing');
  // Unknown (undefined) once an append does not say what it stored: then no VM is kept.
  let mark = lastMark(journal.recorded);
  const append = async (entries: readonly JournalEntryInput[]): Promise<void> => {
    const written = await journal.append(entries);
    if (entries.length === 0) return;
    const last = Array.isArray(written) ? lastMark(written as readonly JournalEntryInput[]) : undefined;
    if (last === undefined || last === null || mark === undefined) mark = undefined;
    else if (mark === null || last.seq > mark.seq) mark = last;
  };
  return {
    resumed,
    request: {
      keepPausedVm: { maxBytes: pausedVms.budgetBytes },
      ...(resumed && kept ? { resumeFrom: kept.vm } : {}),
    },
    append,
    settle(result) {
      const earlier = resumed && kept ? kept.logs : [];
      const logs = earlier.length > 0 ? [...earlier, ...result.logs] : result.logs;
      if (result.status !== 'failed') return earlier.length > 0 ? { ...result, logs } : result;
      const { paused, ...rest } = result;
      if (paused && mark !== undefined && PAUSED_VM_CODES.has(result.error.code)) {
        pausedVms.keep(key, { vm: paused, driver, fingerprint, mark, logs });
      }
      return earlier.length > 0 ? { ...rest, logs } : rest;
    },
  };
}
