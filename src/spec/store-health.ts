/**
 * The kinds of store fault an operator acts on, each with its own remedy: the disk is full, the database is
 * read-only to this process, its files cannot be opened, the disk answers with I/O errors, another process holds
 * the lock past the busy timeout, the file is damaged, or the process ran out of memory.
 */
export const STORE_FAULT_KINDS = [
  'disk_full',
  'read_only',
  'cannot_open',
  'io_error',
  'busy',
  'corrupt',
  'out_of_memory',
] as const;
export type StoreFaultKind = (typeof STORE_FAULT_KINDS)[number];

/** One kind of fault the store is in. */
export interface StoreFault {
  readonly kind: StoreFaultKind;
  /** The driver's own code (SQLite: `SQLITE_FULL`, `SQLITE_READONLY_DIRECTORY`, ...). */
  readonly code: string;
  /** What is wrong and what to do about it, for the operator's log. */
  readonly message: string;
  /** Epoch ms of the first failure of this kind since the store last committed. */
  readonly since: number;
}

/** Whether the store can commit, as its last write probe (or failed operation) says. */
export interface StoreHealth {
  readonly ok: boolean;
  /** Empty when ok; the most recent fault first. */
  readonly faults: readonly StoreFault[];
}

/** What a store reports of its health as it changes (the service logs and counts these). */
export type StoreHealthEvent =
  /** An operation failed with a fault of this kind (every time: the metrics count them). */
  | { readonly type: 'failed'; readonly fault: StoreFault }
  /** The first failure of its kind since the store last committed (the service logs it, once). */
  | { readonly type: 'fault'; readonly fault: StoreFault }
  /** A probe committed again after these faults. */
  | { readonly type: 'recovered'; readonly faults: readonly StoreFault[]; readonly at: number };
