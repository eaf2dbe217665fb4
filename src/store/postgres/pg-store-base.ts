import type pg from 'pg';
import { CodecallError } from '../../errors/index.ts';
import type { StoreHealth, StoreHealthEvent, StoreOptions } from '../../spec/index.ts';
import { toPgStoreError } from './pg-errors.ts';
import { PgHealthMonitor, probeCommit } from './pg-health.ts';
import { transaction } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

export interface PgStoreOptions {
  readonly schema: string;
  /** The server's URL without its password, named in health messages. */
  readonly server?: string;
  /** How long a health probe's answer is reused, and the retry interval while faulted (ms). Default 1000. */
  readonly healthCacheMs?: number;
  readonly onHealth?: (event: StoreHealthEvent) => void;
  /** The audit key its appends are keyed with (ADR 0030), already checked against the schema's; none: unkeyed. */
  readonly auditKey?: Buffer;
}

/**
 * What every method of the PostgreSQL store runs through: the pool, the refusals of a closed store or an aborted
 * signal, the mapping of errors, and the health monitor that every failed operation reports to.
 */
export abstract class PgStoreBase {
  readonly #pool: pg.Pool;
  readonly schema: string;
  /** Never in the database: audit rows, heads and API key rows carry HMACs made with it. */
  protected readonly auditKey: Buffer | undefined;
  #closed = false;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #health: PgHealthMonitor;

  constructor(pool: pg.Pool, options: PgStoreOptions) {
    this.#pool = pool;
    this.schema = options.schema;
    this.auditKey = options.auditKey;
    this.#health = new PgHealthMonitor({
      server: options.server ?? 'PostgreSQL',
      probe: () => probeCommit(pool),
      cacheMs: options.healthCacheMs ?? 1000,
      ...(options.onHealth ? { onHealth: options.onHealth } : {}),
    });
  }

  /** The pool, for the nodes' own statements (same schema and timeouts). */
  get pool(): pg.Pool {
    return this.#pool;
  }

  /**
   * Whether the store can commit: a write probe at most once per `healthCacheMs`; with `probe: false`, what the
   * last probe and the operations since saw. A connection that found the database read-only is not reused, so
   * the store recovers by itself once the database is writable again.
   */
  checkHealth(options: StoreOptions & { probe?: boolean } = {}): Promise<StoreHealth> {
    return this.run(options.signal, () => this.#health.check(options.probe !== false), true);
  }

  /** Waits for the statements under way, then closes the pool's connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.beforeClose();
    await this.#health.close();
    await Promise.allSettled([...this.#inFlight]);
    await this.#pool.end();
  }

  /** A subclass stops its own work here (close then waits for what is under way). */
  protected beforeClose(): void {}

  /** Why an operation is refused before it starts (a closed store, an aborted signal), or undefined. */
  protected refusal(signal: AbortSignal | undefined): CodecallError | undefined {
    if (this.#closed) return new CodecallError('STORE_CLOSED', 'The task store is closed');
    if (signal?.aborted) return new CodecallError('ABORTED', 'The store operation was aborted');
    return undefined;
  }

  /** A failed operation, told to the health monitor, as a CodecallError. */
  protected failure(error: unknown): CodecallError {
    this.#health.failed(error);
    return toPgStoreError(error);
  }

  /** Work close() waits for before it ends the pool. */
  protected track(work: Promise<unknown>): void {
    this.#inFlight.add(work);
    const forget = (): void => {
      this.#inFlight.delete(work);
    };
    work.then(forget, forget);
  }

  /** A write transaction given the audit key (none: unkeyed) and the time it is stamped with. */
  protected keyed<T>(
    options: { signal?: AbortSignal | undefined; now?: number | undefined },
    fn: (sql: Sql, key: Buffer | undefined, now: number) => Promise<T>,
  ): Promise<T> {
    // The time is read as the transaction runs: each attempt of a retried one stamps its own.
    return this.run(options.signal, (sql) => fn(sql, this.auditKey, options.now ?? Date.now()));
  }

  /** One transaction (or, `single`, statements straight on the pool); errors become CodecallErrors. */
  protected async run<T>(
    signal: AbortSignal | undefined,
    fn: (sql: Sql) => Promise<T>,
    single = false,
  ): Promise<T> {
    const refused = this.refusal(signal);
    if (refused) throw refused;
    const work = single ? fn(this.#pool) : transaction(this.#pool, fn);
    this.track(work);
    try {
      return await work;
    } catch (error) {
      throw this.failure(error);
    }
  }
}
