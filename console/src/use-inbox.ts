import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import type { CorruptItem, InboxItem } from './types.ts';
import type { LiveState } from './use-live.ts';
import { useTenantListener } from './use-tenant-events.ts';
import type { TenantEvents } from './use-tenant-events.ts';

/** The approvals inbox as the page shows it; `items` is null until the first read answered. */
export interface Inbox {
  readonly items: readonly InboxItem[] | null;
  readonly corrupt: readonly CorruptItem[];
  /** More tasks wait than the first page holds. */
  readonly more: boolean;
  readonly error: unknown;
  readonly live: LiveState;
  /** Reads it again (after a decision made here). */
  readonly load: () => void;
}

/**
 * The tenant's pending approvals, read again whenever a task's status changes (the tenant's stream). Kept by the
 * app for every page, so the tab's count is current wherever one is.
 */
export function useInbox(api: Api, events: TenantEvents): Inbox {
  const [items, setItems] = useState<readonly InboxItem[] | null>(null);
  const [corrupt, setCorrupt] = useState<readonly CorruptItem[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // One read at a time: changes during a read make one more read after it, not one each.
  const reading = useRef<'idle' | 'busy' | 'again'>('idle');
  const load = useCallback(() => {
    if (reading.current !== 'idle') {
      reading.current = 'again';
      return;
    }
    reading.current = 'busy';
    api
      .approvals()
      .then((r) => {
        setItems(r.approvals);
        setCorrupt(r.corrupt ?? []);
        setMore(typeof r.next_cursor === 'string');
        setError(null);
      })
      .catch(setError)
      .finally(() => {
        const again = reading.current === 'again';
        reading.current = 'idle';
        if (again) load();
      });
  }, [api]);
  useEffect(() => {
    if (events.ready > 0) load();
  }, [events.ready, load]);
  useTenantListener(events, (event) => {
    if (event === 'task' || event === 'corrupt') load();
  });
  return { items, corrupt, more, error, live: events.live, load };
}
