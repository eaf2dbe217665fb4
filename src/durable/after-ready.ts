import type { ExecutionHost } from '../spec/index.ts';

/**
 * `host` with its calls held until `ready` settles: the VM may start (a kept paused VM be restored) while what
 * the run journals before its first call (its attempt) commits, but no call is decided, so no effect starts,
 * before that is durable. A failed `ready` fails the call (the run is stopped by whoever made `ready`).
 */
export function afterReady(host: ExecutionHost, ready: Promise<unknown>): ExecutionHost {
  return {
    call: async (call, signal) => {
      await ready;
      return host.call(call, signal);
    },
    ...(host.onLog ? { onLog: (entry) => host.onLog?.(entry) } : {}),
    ...(host.onReplayDone ? { onReplayDone: () => host.onReplayDone?.() } : {}),
  };
}
