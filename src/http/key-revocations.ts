import { CodecallError } from '../errors/index.ts';
import type { ServiceStore } from '../spec/index.ts';

/** How often the store is asked which of the keys in use were revoked (by another process on the database). */
export const REVOCATION_CHECK_MS = 500;

export interface KeyRevocationOptions {
  /** Asked once per tick for every key that holds a stream or a request open here; none: this process only. */
  readonly store?: Pick<ServiceStore, 'revokedApiKeys'>;
  readonly checkMs?: number;
}

/** What the revocation check did: read by tests (the number of store queries does not grow with streams). */
export interface RevocationStats {
  checks: number;
}

/**
 * The keys in use in this process (by open streams and requests in flight) and what to do when one is revoked:
 * at once when revoked through this server (`revoked`), else within one tick by one store query for all of them.
 */
export class KeyRevocations {
  readonly stats: RevocationStats = { checks: 0 };
  private readonly users = new Map<string, Set<() => void>>();
  private readonly gone = new Set<string>();
  private readonly timer: NodeJS.Timeout | null;
  private running: Promise<void> | null = null;
  /** When the last check that completed started: a key revoked before it would have been seen. */
  private checkedFrom = 0;

  constructor(private readonly options: KeyRevocationOptions = {}) {
    this.timer =
      options.store === undefined
        ? null
        : setInterval(() => void this.check(), options.checkMs ?? REVOCATION_CHECK_MS);
    this.timer?.unref();
  }

  /** Calls `onRevoked` (once) when `keyId` is revoked while in use; returns the release. */
  use(keyId: string, onRevoked: () => void): () => void {
    if (this.gone.has(keyId)) {
      onRevoked();
      return () => undefined;
    }
    let set = this.users.get(keyId);
    if (!set) this.users.set(keyId, (set = new Set()));
    set.add(onRevoked);
    return () => {
      set.delete(onRevoked);
      if (set.size === 0 && this.users.get(keyId) === set) this.users.delete(keyId);
    };
  }

  /** The key was revoked (through this server, or seen by the check): everything using it is told now. */
  revoked(keyId: string): void {
    this.gone.add(keyId);
    const set = this.users.get(keyId);
    this.users.delete(keyId);
    for (const fn of set ?? []) {
      try {
        fn();
      } catch {
        // One user's failure is its own.
      }
    }
  }

  isRevoked(keyId: string | null): boolean {
    return keyId !== null && this.gone.has(keyId);
  }

  /**
   * Settles once a check that started after `since` (ms) completed, so that something made after then (a task
   * created after a revocation elsewhere) is told to a stream only once its key is known to be live. Checks asked
   * for at once are one query.
   */
  async confirmedSince(since: number): Promise<void> {
    // A store that fails every check does not hold the stream for ever: it is asked a few times.
    for (let i = 0; this.options.store !== undefined && i < 3 && this.checkedFrom <= since; i++) {
      await this.check();
    }
  }

  /** One store query for every key in use. */
  check(): Promise<void> {
    const store = this.options.store;
    if (store === undefined) return Promise.resolve();
    if (this.running) return this.running;
    const run = async (): Promise<void> => {
      const from = Date.now();
      const ids = [...this.users.keys()];
      try {
        if (ids.length > 0) {
          this.stats.checks += 1;
          for (const id of await store.revokedApiKeys(ids)) this.revoked(id);
        }
        this.checkedFrom = from;
      } catch {
        // The store is unwell: the next tick asks again.
      }
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

export function keyRevokedError(keyId: string): CodecallError {
  return new CodecallError('KEY_REVOKED', 'the API key of this request was revoked', {
    details: { key_id: keyId },
  });
}
