/** One call in flight to a server: the controller whose signal the SDK is given, and what ends it early. */
export interface WatchedCall {
  /** Aborted by the task's signal, by the bound in all, or by an elicitation's answer. */
  readonly stop: AbortController;
  readonly outer: AbortSignal;
  readonly deadline: number;
  /** The reason the call is stopped with when its bound in all has passed. */
  readonly late: () => unknown;
}

/**
 * The calls in flight to one server, watched for their task's abort and their bound in all (`maxCallSeconds`)
 * without a listener and a timer per call (~10 us of a call's main-thread CPU, docs/benchmarks.md): one listener
 * per task signal, kept until it aborts (a task's one signal would otherwise gather a listener per call: the SDK
 * never takes its own off), and one timer for the oldest call. Every call has the same bound, so the calls in
 * start order are in deadline order.
 */
export class CallWatch {
  private readonly calls = new Set<WatchedCall>();
  private readonly followed = new WeakSet<AbortSignal>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly boundMs: number) {}

  start(outer: AbortSignal, late: () => unknown): WatchedCall {
    const call: WatchedCall = {
      stop: new AbortController(),
      outer,
      deadline: performance.now() + this.boundMs,
      late,
    };
    if (outer.aborted) {
      call.stop.abort(outer.reason);
    } else if (!this.followed.has(outer)) {
      this.followed.add(outer);
      outer.addEventListener('abort', () => this.abortUnder(outer), { once: true });
    }
    this.calls.add(call);
    // A timer that is armed is for an older call's deadline, never a later one.
    if (this.timer === null) this.arm(call.deadline);
    return call;
  }

  /** The call ended; its timer, when it was the oldest, finds the next one when it fires. */
  end(call: WatchedCall): void {
    this.calls.delete(call);
  }

  /** Stops watching (the server is closed). */
  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private abortUnder(outer: AbortSignal): void {
    for (const call of this.calls) if (call.outer === outer) call.stop.abort(outer.reason);
  }

  private arm(deadline: number): void {
    // Unreferenced: a call in flight keeps the process alive by its own connection.
    this.timer = setTimeout(() => this.expire(), Math.max(0, deadline - performance.now()));
    this.timer.unref();
  }

  private expire(): void {
    this.timer = null;
    const now = performance.now();
    for (const call of this.calls) {
      if (call.deadline > now) {
        this.arm(call.deadline);
        return;
      }
      this.calls.delete(call);
      call.stop.abort(call.late());
    }
  }
}
