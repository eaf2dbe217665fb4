import type { JournalEntry, LogEntry, PausedVm, SandboxDriver } from '../spec/index.ts';

/** Default byte budget of the paused VMs a runner keeps in memory (a paused VM is ~1.4 MB): 64 MiB. */
export const DEFAULT_PAUSED_VM_BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * What a resume (a run of a journal that holds replay entries) found: the kept VM, resumed; a kept VM that no
 * longer stands for the journal (the task replayed); or none kept (evicted, never kept, or another process's).
 */
export type PausedVmOutcome = 'resumed' | 'stale' | 'missing';

/** The journal entry the kept VM stands for: the last one its execution saw journaled (ADR 0056). */
export interface JournalMark {
  readonly seq: number;
  readonly checksum: string;
}

/** A paused execution's VM with what a resume checks before it uses it. */
export interface KeptVm {
  readonly vm: PausedVm;
  /** The driver that kept it (the same object must resume it). */
  readonly driver: SandboxDriver;
  /** The request it ran (program, tools, seed, limits, clock, size bounds), as `requestFingerprint` writes it. */
  readonly fingerprint: string;
  /** The journal's last entry when the execution ended (null: the journal held no replay entry). */
  readonly mark: JournalMark | null;
  /** The execution's console lines up to the pause: a replay would print them again. */
  readonly logs: readonly LogEntry[];
}

/**
 * The task's journal up to the mark, as the run that kept the VM read and wrote it: a resume reads only the
 * entries from the mark's seq on and checks the one at the mark (ADR 0056, amended 2026-12-07).
 */
export interface KeptJournal {
  readonly mark: JournalMark;
  readonly entries: readonly JournalEntry[];
  /** What the entries are counted for in the budget (their data's JSON length, roughly). */
  readonly bytes: number;
}

/**
 * Paused VMs in memory within a byte budget, least recently paused first out (ADR 0056). A kept VM is never the
 * only copy of anything: the journal is, and a VM evicted, lost with the process, or not valid any more only
 * means the task replays. Each is taken once.
 */
export class PausedVms {
  private readonly kept = new Map<string, KeptVm>();
  private readonly journals = new Map<string, KeptJournal>();
  private bytes = 0;
  /**
   * Runs that found a VM (and took it), found none; of those found, the ones resumed and the ones not valid any
   * more (the task replayed); VMs kept and evicted.
   */
  readonly counts = {
    hits: 0,
    misses: 0,
    resumed: 0,
    stale: 0,
    kept: 0,
    evicted: 0,
    /** Resumes that read only the journal after the mark, and those that found it moved and read it whole. */
    tailReads: 0,
    tailMoved: 0,
  };

  constructor(
    readonly budgetBytes: number = DEFAULT_PAUSED_VM_BUDGET_BYTES,
    /** Told each resume's outcome (the service's metrics). */
    private readonly onOutcome?: (outcome: PausedVmOutcome) => void,
  ) {}

  /** Counts a resume's outcome and tells the listener. */
  noteResume(outcome: PausedVmOutcome): void {
    if (outcome === 'resumed') this.counts.resumed += 1;
    else if (outcome === 'stale') this.counts.stale += 1;
    try {
      this.onOutcome?.(outcome);
    } catch {
      // A listener's failure is its own.
    }
  }

  /** Keeps `vm` under `key` (replacing one kept there); false when it alone is over the budget. */
  keep(key: string, vm: KeptVm): boolean {
    this.drop(key);
    if (vm.vm.bytes > this.budgetBytes) return false;
    while (this.bytes + vm.vm.bytes > this.budgetBytes) {
      const oldest = this.kept.keys().next();
      if (oldest.done) break;
      this.drop(oldest.value);
      this.counts.evicted += 1;
    }
    this.kept.set(key, vm);
    this.bytes += vm.vm.bytes;
    this.counts.kept += 1;
    return true;
  }

  /** Takes the VM kept under `key` out (a resume uses it once). */
  take(key: string): KeptVm | undefined {
    const vm = this.kept.get(key);
    if (vm) this.drop(key);
    if (vm) this.counts.hits += 1;
    else this.counts.misses += 1;
    return vm;
  }

  /**
   * Keeps the task's journal up to the mark of the VM kept under `key`, with it (dropped with it, counted in the
   * budget). Nothing is kept when no VM is kept there, the journal does not end at its mark, or it is over the
   * budget's room.
   */
  keepJournal(key: string, through: (seq: number) => readonly JournalEntry[] | undefined): boolean {
    const mark = this.kept.get(key)?.mark;
    const entries = mark ? through(mark.seq) : undefined;
    const last = entries?.at(-1);
    if (!mark || !entries || last?.seq !== mark.seq || last.checksum !== mark.checksum) return false;
    let bytes = 0;
    for (const e of entries) bytes += 96 + JSON.stringify(e.data).length;
    if (this.bytes + bytes > this.budgetBytes) return false;
    this.dropJournal(key);
    this.journals.set(key, { mark, entries, bytes });
    this.bytes += bytes;
    return true;
  }

  /** Whether a VM is kept under `key` (not taken). */
  has(key: string): boolean {
    return this.kept.has(key);
  }

  /** The journal kept with the VM under `key` (not taken: the resume takes the VM later). */
  journalOf(key: string): KeptJournal | undefined {
    return this.journals.get(key);
  }

  /** Forgets the VM kept under `key`, if any, and its journal. */
  drop(key: string): void {
    this.dropJournal(key);
    const vm = this.kept.get(key);
    if (!vm) return;
    this.kept.delete(key);
    this.bytes -= vm.vm.bytes;
  }

  /** Forgets the journal kept with the VM under `key` (the VM stays; its resume reads the journal whole). */
  dropJournal(key: string): void {
    const journal = this.journals.get(key);
    if (!journal) return;
    this.journals.delete(key);
    this.bytes -= journal.bytes;
  }

  get size(): number {
    return this.kept.size;
  }

  get heldBytes(): number {
    return this.bytes;
  }
}
