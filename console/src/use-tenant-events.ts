import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { useLive } from './use-live.ts';
import type { LiveState } from './use-live.ts';

type Listener = (event: string, data: unknown) => void;

/** The tenant's one event stream (GET /api/v1/task-events), shared by the pages that follow it. */
export interface TenantEvents {
  readonly live: LiveState;
  /**
   * How many `ready` events came: the stream is subscribed from the first, so a reader that (re)loads when this
   * changes misses no change between its read and the stream (a reconnect counts again).
   */
  readonly ready: number;
  /** Adds a listener of every event; returns its remover. */
  readonly listen: (fn: Listener) => () => void;
}

/**
 * One stream per page for the list, the inbox and the Approvals tab's count (each key may hold only so many
 * streams open: 16 by default).
 */
export function useTenantEvents(api: Api): TenantEvents {
  const listeners = useRef(new Set<Listener>());
  const [ready, setReady] = useState(0);
  const live = useLive(api, '/api/v1/task-events', (event, data) => {
    if (event === 'ready') setReady((n) => n + 1);
    for (const fn of listeners.current) fn(event, data);
  });
  const listen = useCallback((fn: Listener) => {
    listeners.current.add(fn);
    return () => void listeners.current.delete(fn);
  }, []);
  return useMemo(() => ({ live, ready, listen }), [live, ready, listen]);
}

/** Calls `fn` (as of the last render, so it sees current state) for each event of the tenant's stream. */
export function useTenantListener(events: TenantEvents, fn: Listener): void {
  const latest = useRef(fn);
  latest.current = fn;
  const { listen } = events;
  useEffect(() => listen((event, data) => latest.current(event, data)), [listen]);
}
