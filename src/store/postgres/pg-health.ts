import type pg from 'pg';
import type { StoreFault, StoreFaultKind, StoreHealth, StoreHealthEvent } from '../../spec/index.ts';
import { intervalMs } from '../../spec/index.ts';
import { toPgStoreFault } from './pg-faults.ts';
import { transaction } from './pg-sql.ts';

/** While faulted, probes come at most this often, however short the cache. */
const MIN_RETRY_MS = 100;

/**
 * The health probe: one row updated and committed (only a commit shows a full disk or a read-only server). It
 * waits at most 1 s for another node's probe holding the row, so a probe cannot stall readiness.
 */
export async function probeCommit(pool: pg.Pool): Promise<void> {
  await transaction(pool, async (sql) => {
    await sql.query("SET LOCAL lock_timeout = '1s'");
    await sql.query('UPDATE store_probe SET probed_at = $1 WHERE id = 1', [Date.now()]);
  });
}

export interface PgHealthMonitorOptions {
  /** The server's URL without its password, named in the faults' messages. */
  readonly server: string;
  /** One small write that commits; rejects with what the store threw. */
  readonly probe: () => Promise<void>;
  /** A probe's answer is reused this long (ms); also the retry interval while faulted. */
  readonly cacheMs: number;
  readonly onHealth?: (event: StoreHealthEvent) => void;
  readonly clock?: () => number;
}

/**
 * The PostgreSQL store's health, as StoreHealthMonitor keeps the SQLite store's (same events), with an
 * asynchronous probe: concurrent checks share one probe, and a probe's commit clears only the faults last seen
 * before it began (an operation that failed while it ran is newer news).
 */
export class PgHealthMonitor {
  readonly #options: PgHealthMonitorOptions;
  readonly #faults = new Map<StoreFaultKind, { fault: StoreFault; lastAt: number }>();
  #probedAt = Number.NEGATIVE_INFINITY;
  #probing: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: PgHealthMonitorOptions) {
    this.#options = options;
  }

  /** Notes a failed operation; anything but a store fault (a constraint, FENCED, NOT_FOUND) is ignored. */
  failed(error: unknown): void {
    const now = this.#now();
    const fault = toPgStoreFault(error, this.#options.server, now);
    if (fault === null) return;
    this.#emit({ type: 'failed', fault });
    const open = this.#faults.get(fault.kind);
    if (open !== undefined) open.lastAt = now;
    else {
      this.#faults.set(fault.kind, { fault, lastAt: now });
      this.#emit({ type: 'fault', fault });
    }
    if (fault.kind !== 'corrupt') this.#scheduleRetry();
  }

  /** Probes unless a probe ran within `cacheMs` (or `probe` is false), then says what is known. */
  async check(probe = true): Promise<StoreHealth> {
    if (probe) await this.#probeIfStale();
    const faults = [...this.#faults.values()].map((f) => f.fault).sort((a, b) => b.since - a.since);
    return { ok: faults.length === 0, faults };
  }

  /** Stops the retries; resolves once a probe under way has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#probing?.catch(() => undefined);
  }

  #probeIfStale(): Promise<void> {
    if (this.#probing !== undefined) return this.#probing;
    if (this.#now() - this.#probedAt < this.#options.cacheMs) return Promise.resolve();
    const probing = this.#probe(this.#now());
    this.#probing = probing;
    return probing.finally(() => {
      if (this.#probing === probing) this.#probing = undefined;
    });
  }

  async #probe(at: number): Promise<void> {
    this.#probedAt = at;
    try {
      await this.#options.probe();
    } catch (error) {
      if (toPgStoreFault(error, this.#options.server, at) === null) throw error;
      this.failed(error);
      return;
    }
    // A probe's commit proves nothing of a damaged page elsewhere: `corrupt` stays until a restart (after a
    // restore), rather than clearing and being logged again at every read that meets it.
    const cleared = [...this.#faults.values()].filter((f) => f.fault.kind !== 'corrupt' && f.lastAt < at);
    if (cleared.length === 0) return;
    for (const f of cleared) this.#faults.delete(f.fault.kind);
    if (this.#faults.size === 0) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    this.#emit({ type: 'recovered', faults: cleared.map((f) => f.fault), at });
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(
      () => {
        this.#retry = undefined;
        if (this.#closed) return;
        void this.check()
          .catch(() => undefined) // not a store fault (the store closing): nothing to retry
          .then(() => {
            if ([...this.#faults.keys()].some((kind) => kind !== 'corrupt')) this.#scheduleRetry();
          });
      },
      intervalMs(Math.max(this.#options.cacheMs, MIN_RETRY_MS)),
    );
    this.#retry.unref();
  }

  #now(): number {
    return (this.#options.clock ?? Date.now)();
  }

  #emit(event: StoreHealthEvent): void {
    try {
      this.#options.onHealth?.(event);
    } catch {
      // A listener's failure is its own; the store goes on.
    }
  }
}
