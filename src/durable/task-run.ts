import { CodecallError, isCodecallError } from '../errors/index.ts';
import type {
  JournalEntry,
  JournalEntryInput,
  JournalLimits,
  Lease,
  LogEntry,
  TaskStore,
} from '../spec/index.ts';
import { intervalMs } from '../spec/index.ts';
import type { RuntimeEvent } from '../api/index.ts';

export interface TaskRunOptions {
  readonly store: TaskStore;
  readonly leaseMs: number;
  /** Sees the entries the run journals; absent when nobody listens (no event is built then). */
  readonly emit?: (event: RuntimeEvent) => void;
  /** The guest's console output as it happens; absent when nobody listens. */
  readonly onLog?: (entry: LogEntry) => void;
  /** The run lost its lease (a renewal refused, or proven lost before a tool call); said once per run. */
  readonly onLeaseLost?: (reason: CodecallError) => void;
  /** Bounds on the task's whole journal (ADR 0029): an append over them ends the run with JOURNAL_LIMIT. */
  readonly journalLimits?: JournalLimits;
}

/**
 * One run of a claimed task, from the claim to the release of its lease: the lease (renewed while it runs), the
 * signal that interrupts it, and what its end depends on (who interrupted it, whether a cancel was asked, whether
 * its journal holds input waits).
 */
export class TaskRun {
  /** The lease the run was claimed with; its fencing token guards every write. */
  readonly lease: Lease;
  readonly onLog: ((entry: LogEntry) => void) | undefined;
  private readonly controller = new AbortController();
  /** Stops the calls a pause lets finish (a shutdown past its time); see `toolSignal`. */
  private readonly calls = new AbortController();
  /** The lease as last renewed (what is released at the end). */
  private held: Lease;
  private renewal: NodeJS.Timeout | undefined;
  private interruptedBy: string | undefined;
  private cancelAsked = false;
  private inputsAsked = false;
  private leaseLost = false;
  /** The journal as read at the start and appended by this run, when tracked (`track`): see `journalThrough`. */
  private tracked: JournalEntry[] | undefined;
  private trackRoom = 0;

  constructor(
    lease: Lease,
    private readonly options: TaskRunOptions,
  ) {
    this.lease = lease;
    this.held = lease;
    this.onLog = options.onLog;
  }

  get taskId(): string {
    return this.lease.taskId;
  }

  /** Aborted by pause, cancel, shutdown, the deadline and a lost lease; its reason's `code` says which. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Aborted when the calls still running must stop although the run's end would let them finish (a pause does:
   * run-journaled.ts): a shutdown past its time. Ends that stop calls anyway (cancel, deadline, lost lease) need
   * not abort it.
   */
  get toolSignal(): AbortSignal {
    return this.calls.signal;
  }

  get fenced(): { readonly fencingToken: number } {
    return { fencingToken: this.lease.fencingToken };
  }

  /** What settling the run needs to know of it besides its result. */
  get ending(): { readonly actor?: string; readonly cancelled: boolean; readonly inputRequested: boolean } {
    return {
      cancelled: this.cancelAsked,
      inputRequested: this.inputsAsked,
      ...(this.interruptedBy === undefined ? {} : { actor: this.interruptedBy }),
    };
  }

  /** Renews the lease every third of its time until release; a renewal refused interrupts the run. */
  keepLease(): void {
    this.renewal ??= setInterval(
      () => {
        this.options.store.renewLease(this.held, { leaseMs: this.options.leaseMs }).then(
          (next) => (this.held = next),
          (e: unknown) => this.lost(isCodecallError(e) ? e : new CodecallError('FENCED', 'lost the lease')),
        );
      },
      intervalMs(Math.max(10, Math.floor(this.options.leaseMs / 3))),
    );
  }

  /**
   * Proves the lease is still held (asked before a side effect starts); when it is not, the run is interrupted
   * (FENCED) and the error thrown.
   */
  async proveLease(): Promise<void> {
    try {
      if (Date.now() >= this.held.expiresAt) {
        // Past its expiry by this process's own clock (it stalled): another worker may hold the task by now.
        throw new CodecallError('FENCED', `the lease on task ${this.taskId} expired (the worker stalled)`);
      }
      await this.options.store.assertLease(this.held);
    } catch (e) {
      const lost = isCodecallError(e) ? e : new CodecallError('FENCED', 'lost the lease');
      this.lost(lost);
      throw lost;
    }
  }

  /** Stops renewing and gives the lease back (a lease already lost is nothing to give back). */
  async release(): Promise<void> {
    clearInterval(this.renewal);
    await this.options.store.releaseLease(this.held).catch(() => undefined);
  }

  /** A pause, cancel or shutdown asked of this run; `actor` (when given) is who the audit log names. */
  interrupt(reason: CodecallError, actor?: string): void {
    if (actor !== undefined) this.interruptedBy = actor;
    // A cancel wins over any pause, whichever came first (an abort of an aborted signal changes nothing, so it is
    // remembered apart from the signal and settling honours it).
    if (reason.code === 'CANCELLED') this.cancelAsked = true;
    this.controller.abort(reason);
  }

  /** Stops the calls still running as well (after `interrupt` with a pause, they would run to their end). */
  stopCalls(reason: CodecallError): void {
    this.controller.abort(reason);
    this.calls.abort(reason);
  }

  /** The lease is gone: said once, and the run stops with its calls (their signals abort at once). */
  private lost(reason: CodecallError): void {
    if (this.leaseLost) return;
    this.leaseLost = true;
    this.options.onLeaseLost?.(reason);
    this.abort(reason);
  }

  /** Interrupts the run for a reason of its own (the deadline, a lost lease). */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** Notes what in the journal the run's end depends on: input waits (a pause then looks for a wake-up time). */
  observe(entries: readonly JournalEntryInput[]): void {
    if (!this.inputsAsked) this.inputsAsked = entries.some((e) => e.type === 'input_request');
  }

  /**
   * Keeps the journal as read at the run's start and, from now on, what this run appends to it, until the
   * appended entries' strings pass `maxBytes` (then nothing: a journal that large could not be kept with a paused
   * VM, and a long run must not hold every entry it wrote).
   */
  track(journal: readonly JournalEntry[], maxBytes: number): void {
    this.tracked = [...journal];
    this.trackRoom = maxBytes;
  }

  /**
   * The journal's entries 1..seq as this run read and wrote them, or undefined when it cannot tell (not tracked,
   * or an entry in between was written by someone else, e.g. a control action folded in by `updateTask`).
   */
  journalThrough(seq: number): JournalEntry[] | undefined {
    if (!this.tracked) return undefined;
    // Appends resolve in seq order within a commit, but concurrent ones may settle out of order.
    const sorted = [...this.tracked].sort((a, b) => a.seq - b.seq);
    const upTo = sorted.findIndex((e) => e.seq > seq);
    const prefix = upTo < 0 ? sorted : sorted.slice(0, upTo);
    return prefix.every((e, i) => e.seq === i + 1) && prefix.at(-1)?.seq === seq ? prefix : undefined;
  }

  private keepTracked(written: readonly JournalEntry[]): void {
    for (const e of written) {
      // The strings of an entry's data (arguments, payloads in wire form) are its size, near enough.
      for (const v of Object.values(e.data)) this.trackRoom -= typeof v === 'string' ? v.length : 8;
      this.tracked?.push(e);
    }
    if (this.trackRoom < 0) this.tracked = undefined;
  }

  /**
   * Journals entries under the run's lease. Entries that would take the journal over its bounds are not written
   * and end the run with JOURNAL_LIMIT (the run fails with it, what was journaled before stays as it was).
   */
  /** Resolves to the entries as stored (seq and checksum). */
  async append(entries: readonly JournalEntryInput[]): Promise<JournalEntry[]> {
    this.observe(entries);
    const { journalLimits } = this.options;
    const options = journalLimits ? { ...this.fenced, limits: journalLimits } : this.fenced;
    let written;
    try {
      written = await this.options.store.appendJournal(this.taskId, entries, options);
    } catch (e) {
      if (isCodecallError(e) && e.code === 'JOURNAL_LIMIT') this.abort(e);
      throw e;
    }
    if (this.tracked) this.keepTracked(written);
    this.options.emit?.({ type: 'journal', taskId: this.taskId, entries: written });
    return written;
  }
}
