import type { StoreFault, StoreHealth, StoreHealthEvent } from '../../spec/index.ts';
import { intervalMs } from '../../spec/index.ts';
import { toStoreFault } from './store-faults.ts';

/** While faulted, probes come at most this often, however short the cache. */
const MIN_RETRY_MS = 100;

export interface StoreHealthMonitorOptions {
  /** The database file, named in the faults' messages. */
  readonly path: string;
  /** One small write that commits; throws what the store threw. */
  readonly probe: () => void;
  /** A probe's answer is reused this long (ms); also the retry interval while faulted. */
  readonly cacheMs: number;
  readonly onHealth?: (event: StoreHealthEvent) => void;
  readonly clock?: () => number;
}

/**
 * The store's health: which kinds of fault its operations and probes have met since it last committed a probe.
 * The first failure of a kind is a `fault` event (logged once), every one a `failed` event (counted); while any
 * fault is open it probes again every `cacheMs` by itself, so a cleared fault is noticed (and a read-only
 * connection replaced) without anyone polling /readyz, and reported once as `recovered`.
 */
export class StoreHealthMonitor {
  readonly #options: StoreHealthMonitorOptions;
  readonly #faults = new Map<string, StoreFault>();
  #probedAt = Number.NEGATIVE_INFINITY;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: StoreHealthMonitorOptions) {
    this.#options = options;
  }

  /** Notes a failed operation; anything but a store fault (a constraint, FENCED, NOT_FOUND) is ignored. */
  failed(error: unknown): void {
    const fault = toStoreFault(error, this.#options.path, this.#now());
    if (fault === null) return;
    this.#emit({ type: 'failed', fault });
    if (!this.#faults.has(fault.kind)) {
      this.#faults.set(fault.kind, fault);
      this.#emit({ type: 'fault', fault });
    }
    if (fault.kind !== 'corrupt') this.#scheduleRetry();
  }

  /** Probes unless a probe ran within `cacheMs` (or `probe` is false), then says what is known. */
  check(probe = true): StoreHealth {
    if (probe && this.#now() - this.#probedAt >= this.#options.cacheMs) this.#probe();
    const faults = [...this.#faults.values()].sort((a, b) => b.since - a.since);
    return { ok: faults.length === 0, faults };
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  #probe(): void {
    this.#probedAt = this.#now();
    try {
      this.#options.probe();
    } catch (error) {
      if (toStoreFault(error, this.#options.path, this.#probedAt) === null) throw error;
      this.failed(error);
      return;
    }
    // A probe's commit proves nothing of a damaged page elsewhere: `corrupt` stays until a restart (after a
    // restore), rather than clearing and being logged again at every read that meets it.
    const faults = [...this.#faults.values()].filter((f) => f.kind !== 'corrupt');
    if (faults.length === 0) return;
    for (const f of faults) this.#faults.delete(f.kind);
    if (this.#faults.size === 0) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    this.#emit({ type: 'recovered', faults, at: this.#probedAt });
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(
      () => {
        this.#retry = undefined;
        if (this.#closed) return;
        try {
          this.check();
        } catch {
          // Not a store fault (the store closing): nothing to retry.
        }
        if ([...this.#faults.keys()].some((kind) => kind !== 'corrupt')) this.#scheduleRetry();
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
