import type pg from 'pg';
import { isRecord } from '../../spec/is-record.ts';
import type { StoreSignal } from '../../spec/index.ts';

/** A node tells others its journal appends at most this often (one small notify per window, not one per commit). */
const CHANGED_WINDOW_MS = 20;
const MAX_RETRY_MS = 5000;

/**
 * LISTEN on the schema's channel over one dedicated connection while anyone watches (ADR 0042). A connection that
 * drops is opened again with backoff; since signals sent meanwhile are lost, a reconnect is told as `work` and
 * `changed`, so watchers look once for what they missed.
 */
export class PgNotifier {
  readonly #listeners = new Set<(signal: StoreSignal) => void>();
  readonly #connect: () => pg.Client;
  readonly #channel: string;
  readonly #notify: (payload: string) => Promise<unknown>;
  #client: pg.Client | null = null;
  #retryMs = 100;
  #retry: NodeJS.Timeout | undefined;
  #changedTimer: NodeJS.Timeout | undefined;
  #changedAt = 0;
  #closed = false;

  constructor(options: {
    connect: () => pg.Client;
    channel: string;
    notify: (channel: string, payload: string) => Promise<unknown>;
  }) {
    this.#connect = options.connect;
    this.#channel = options.channel;
    this.#notify = (payload) => options.notify(this.#channel, payload);
  }

  watch(listener: (signal: StoreSignal) => void): () => void {
    this.#listeners.add(listener);
    if (this.#listeners.size === 1) this.#open(false);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#drop();
    };
  }

  /** This node's appends committed: tell the others (trailing edge of a short window, so bursts send one). */
  changed(): void {
    if (this.#closed || this.#changedTimer !== undefined) return;
    const wait = Math.max(0, this.#changedAt + CHANGED_WINDOW_MS - Date.now());
    this.#changedTimer = setTimeout(() => {
      this.#changedTimer = undefined;
      this.#changedAt = Date.now();
      this.#notify('{"kind":"changed"}').catch(() => undefined);
    }, wait);
    this.#changedTimer.unref();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#changedTimer);
    this.#listeners.clear();
    this.#drop();
  }

  #open(reconnect: boolean): void {
    if (this.#closed || this.#client !== null || this.#listeners.size === 0) return;
    const client = this.#connect();
    this.#client = client;
    const lost = (): void => {
      if (this.#client !== client) return;
      this.#client = null;
      client.end().catch(() => undefined);
      this.#schedule();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      const signal = parseSignal(message.payload);
      if (signal !== null) this.#emit(signal);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN "${this.#channel}"`))
      .then(() => {
        this.#retryMs = 100;
        if (reconnect) {
          this.#emit({ kind: 'work' });
          this.#emit({ kind: 'changed' });
        }
      })
      .catch(lost);
  }

  #schedule(): void {
    if (this.#closed || this.#retry !== undefined || this.#listeners.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#open(true);
    }, this.#retryMs);
    this.#retry.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
  }

  #drop(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = null;
    client?.end().catch(() => undefined);
  }

  #emit(signal: StoreSignal): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(signal);
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}

function parseSignal(payload: string | undefined): StoreSignal | null {
  let value: unknown;
  try {
    value = JSON.parse(payload ?? '');
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  if (value.kind === 'work' || value.kind === 'changed') return { kind: value.kind };
  if (
    value.kind === 'control' &&
    typeof value.taskId === 'string' &&
    (value.action === 'pause' || value.action === 'cancel')
  ) {
    return {
      kind: 'control',
      taskId: value.taskId,
      owner: typeof value.owner === 'string' ? value.owner : null,
      action: value.action,
    };
  }
  return null;
}
