import { CodecallError } from '../../src/errors/index.ts';
import type {
  ControlRequest,
  JournalEntry,
  JournalEntryInput,
  JournalSummary,
  Lease,
  StoreOptions,
  TaskFilter,
  TaskInput,
  TaskPatch,
  TaskRecord,
  TaskStatus,
  TaskStore,
} from '../../src/spec/index.ts';

/** One successful write to a task, in commit order (`seq`), as seen by the store wrappers of one property run. */
export interface WriteRecord {
  readonly seq: number;
  readonly taskId: string;
  readonly op: 'create' | 'update' | 'claim' | 'append';
  /** The task's status after the write; null for journal appends (they change no status). */
  readonly status: TaskStatus | null;
  /** The task's version after the write, where the store returns it (create, update). */
  readonly version: number | null;
  /** Which wrapper (runtime) wrote. */
  readonly by: string;
}

/**
 * Shared by every wrapper of one run. better-sqlite3 is synchronous: a store method commits before it returns its
 * (already settled) promise, so numbering writes when they are called gives the commit order across connections.
 * `versionsIncrease` (checked by the test) confirms that assumption on every run.
 */
export class WriteRecorder {
  readonly writes: WriteRecord[] = [];
  private counter = 0;

  next(): number {
    return ++this.counter;
  }

  /** The current position, to find the writes made after some moment. */
  get position(): number {
    return this.counter;
  }

  add(record: WriteRecord): void {
    this.writes.push(record);
  }

  of(taskId: string): WriteRecord[] {
    return this.writes.filter((w) => w.taskId === taskId).sort((a, b) => a.seq - b.seq);
  }
}

/**
 * A TaskStore that forwards every call to a real store (its own SQLite connection) and only records successful
 * writes, or, once `crash()` is called, refuses everything: the runtime using it has died and can write nothing
 * more, so its leases expire and another runtime recovers its tasks.
 */
export class FaultyRecordingStore implements TaskStore {
  private dead = false;
  /** Writes still allowed before the crash takes effect (null: no crash scheduled). */
  private budget: number | null = null;

  constructor(
    private readonly inner: TaskStore,
    private readonly recorder: WriteRecorder,
    readonly name: string,
  ) {}

  get crashed(): boolean {
    return this.dead;
  }

  /**
   * Dies once `afterWrites` more writes have succeeded (0: at once). Writes are the moments that matter (a
   * committed intent, a claim, an outcome); counting them puts the crash at a precise point of a run.
   */
  crash(afterWrites = 0): void {
    if (afterWrites <= 0) this.dead = true;
    else this.budget = afterWrites;
  }

  /** Closes the real connection (after the run). */
  closeInner(): Promise<void> {
    return this.inner.close();
  }

  createTask(input: TaskInput, options?: StoreOptions & { id?: string; now?: number }): Promise<TaskRecord> {
    return this.write(
      () => this.inner.createTask(input, options),
      (r, seq) => this.recordTask('create', r, seq),
    );
  }

  createBatch(...args: Parameters<TaskStore['createBatch']>): ReturnType<TaskStore['createBatch']> {
    return this.write(
      () => this.inner.createBatch(...args),
      () => undefined,
    );
  }

  getBatch(...args: Parameters<TaskStore['getBatch']>): ReturnType<TaskStore['getBatch']> {
    return this.read(() => this.inner.getBatch(...args));
  }

  readAudit(...args: Parameters<TaskStore['readAudit']>): ReturnType<TaskStore['readAudit']> {
    return this.read(() => this.inner.readAudit(...args));
  }

  getTask(id: string, options?: StoreOptions): Promise<TaskRecord | null> {
    return this.read(() => this.inner.getTask(id, options));
  }

  countTasks(...args: Parameters<TaskStore['countTasks']>): ReturnType<TaskStore['countTasks']> {
    return this.read(() => this.inner.countTasks(...args));
  }

  listTasks(
    filter?: TaskFilter,
    options?: StoreOptions,
  ): Promise<{ tasks: TaskRecord[]; nextCursor: string | null }> {
    return this.read(() => this.inner.listTasks(filter, options));
  }

  appendJournal(
    taskId: string,
    entries: readonly JournalEntryInput[],
    options: StoreOptions & { fencingToken: number; now?: number },
  ): Promise<JournalEntry[]> {
    return this.write(
      () => this.inner.appendJournal(taskId, entries, options),
      (_written, seq) =>
        this.recorder.add({ seq, taskId, op: 'append', status: null, version: null, by: this.name }),
    );
  }

  readJournal(
    taskId: string,
    options?: StoreOptions & { afterSeq?: number; limit?: number },
  ): Promise<JournalEntry[]> {
    return this.read(() => this.inner.readJournal(taskId, options));
  }

  readJournalPage(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number; maxBytes: number },
  ): Promise<{ entries: JournalEntry[]; more: boolean }> {
    return this.read(() => this.inner.readJournalPage(taskId, options));
  }

  readJournalSummary(taskId: string, options?: StoreOptions): Promise<JournalSummary | null> {
    return this.read(() => this.inner.readJournalSummary(taskId, options));
  }

  saveJournalSummary(taskId: string, summary: JournalSummary, options?: StoreOptions): Promise<boolean> {
    // Derived data, not a write of the task's state: not recorded.
    return this.read(() => this.inner.saveJournalSummary(taskId, summary, options));
  }

  updateTask(
    taskId: string,
    patch: TaskPatch,
    options: Parameters<TaskStore['updateTask']>[2],
  ): Promise<TaskRecord> {
    return this.write(
      () => this.inner.updateTask(taskId, patch, options),
      (r, seq) => this.recordTask('update', r, seq),
    );
  }

  claimTask(owner: string, options: Parameters<TaskStore['claimTask']>[1]): Promise<Lease | null> {
    return this.write(
      () => this.inner.claimTask(owner, options),
      (lease, seq) => {
        if (lease) {
          this.recorder.add({
            seq,
            taskId: lease.taskId,
            op: 'claim',
            status: 'running',
            version: null,
            by: this.name,
          });
        }
      },
    );
  }

  requestControl(taskId: string, action: ControlRequest, options?: StoreOptions): Promise<TaskRecord> {
    return this.read(() => this.inner.requestControl(taskId, action, options));
  }

  listControlRequests(
    owner: string,
    options?: StoreOptions,
  ): Promise<{ taskId: string; action: ControlRequest }[]> {
    return this.read(() => this.inner.listControlRequests(owner, options));
  }

  renewLease(lease: Lease, options: StoreOptions & { leaseMs: number; now?: number }): Promise<Lease> {
    return this.read(() => this.inner.renewLease(lease, options));
  }

  assertLease(lease: Lease, options?: StoreOptions & { now?: number }): Promise<void> {
    return this.read(() => this.inner.assertLease(lease, options));
  }

  releaseLease(lease: Lease, options?: StoreOptions): Promise<void> {
    return this.read(() => this.inner.releaseLease(lease, options));
  }

  expireLeases(...args: Parameters<TaskStore['expireLeases']>): ReturnType<TaskStore['expireLeases']> {
    return this.read(() => this.inner.expireLeases(...args));
  }

  /** The runtime's close does not close its store; the test closes the connection with `closeInner`. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private recordTask(op: 'create' | 'update', r: TaskRecord, seq: number): void {
    this.recorder.add({ seq, taskId: r.id, op, status: r.status, version: r.version, by: this.name });
  }

  /** Calls that change no status or version (or whose effect the test does not follow). */
  private read<T>(call: () => Promise<T>): Promise<T> {
    const refused = this.refuse();
    return refused ?? call();
  }

  private write<T>(call: () => Promise<T>, record: (value: T, seq: number) => void): Promise<T> {
    const refused = this.refuse();
    if (refused) return refused;
    const seq = this.recorder.next();
    return call().then((value) => {
      record(value, seq);
      // A claim that found nothing wrote nothing.
      if (value !== null && this.budget !== null && --this.budget <= 0) {
        this.budget = null;
        this.dead = true;
      }
      return value;
    });
  }

  private refuse(): Promise<never> | null {
    if (!this.dead) return null;
    return Promise.reject(new CodecallError('STORE_CLOSED', `${this.name} crashed (injected fault)`));
  }
}
