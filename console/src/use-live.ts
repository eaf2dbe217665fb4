import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.ts';

export type LiveState = 'connecting' | 'live' | 'ended' | 'retrying';

/**
 * Keeps an SSE stream of `path` open while mounted (and while `enabled`), reconnecting after a failure;
 * `onEvent` sees every event. The stream ending by itself (a task's stream after its end) is not retried.
 */
export function useLive(
  api: Api,
  path: string,
  onEvent: (event: string, data: unknown) => void,
  options: { enabled?: boolean; deps?: readonly unknown[] } = {},
): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const enabled = options.enabled ?? true;
  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const open = (): void => {
      setState('connecting');
      api
        .stream(
          path,
          (event, data) => {
            // A message already read when the stream was let go of is not this render's.
            if (abort.signal.aborted) return;
            setState('live');
            onEvent(event, data);
          },
          abort.signal,
        )
        .then(() => !abort.signal.aborted && setState('ended'))
        .catch(() => {
          if (abort.signal.aborted) return;
          setState('retrying');
          timer = setTimeout(open, 2000);
        });
    };
    open();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
    // The caller names what restarts the stream (its filters); onEvent is the closure of that render.
  }, [api, path, enabled, ...(options.deps ?? [])]);
  return state;
}
