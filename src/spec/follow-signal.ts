/**
 * A controller of one operation's own that aborts when `outer` does, until `release()`. For an operation under a
 * long-lived signal (a task's, a corpus's): `AbortSignal.any` would hang a dependent on the outer signal for each
 * operation (Node 20 drops them only as their weak references are collected), and a library given the outer signal
 * itself may never take its listener off (the MCP SDK does not).
 */
export function followSignal(outer: AbortSignal | undefined): {
  controller: AbortController;
  release: () => void;
} {
  const controller = new AbortController();
  if (outer === undefined) return { controller, release: () => undefined };
  const follow = (): void => controller.abort(outer.reason);
  if (outer.aborted) follow();
  else outer.addEventListener('abort', follow, { once: true });
  return { controller, release: () => outer.removeEventListener('abort', follow) };
}
