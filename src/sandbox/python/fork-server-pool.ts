import type { PythonProcess } from './python-process.ts';

/** What ServerReturns needs of its driver. */
export interface ReturnsHost {
  readonly pool: Promise<PythonProcess>[];
  warm(): number;
  closed(): boolean;
  dispose(proc: PythonProcess): void;
  /** Work close() waits for. */
  track(work: Promise<void>): void;
}

/**
 * The fork servers a python driver has out (running an execution, or making the next execution's process):
 * counted in the pool's size, since they come back, and waited for by executions that find the pool empty (a
 * server is back in milliseconds, a cold start takes tens). ADR 0061.
 */
export class ServerReturns {
  /** Fork servers out of the pool that may come back. */
  out = 0;
  private readonly waiters: ((proc: PythonProcess | null) => void)[] = [];

  constructor(private readonly host: ReturnsHost) {}

  /** A fork server on its way back, when more are out than executions wait for (null: none came; go cold). */
  take(): Promise<PythonProcess | null> | undefined {
    if (this.out <= this.waiters.length || this.host.closed()) return undefined;
    return new Promise<PythonProcess | null>((resolve) => this.waiters.push(resolve));
  }

  /** An execution took a fork server out of the pool. */
  taken(): void {
    this.out += 1;
  }

  /** Its execution is over: the server comes back if it can serve another, else it goes (and a waiter with it). */
  ended(proc: PythonProcess): void {
    if (!proc.reusable || this.host.closed()) {
      this.out -= 1;
      this.waiters.shift()?.(null);
      this.host.dispose(proc);
      return;
    }
    const done = proc
      .recycle()
      .catch(() => false)
      .then((ok) => {
        this.out -= 1;
        const waiter = this.waiters.shift();
        if (ok && !this.host.closed() && waiter) waiter(proc);
        else if (ok && !this.host.closed() && this.host.pool.length < this.host.warm())
          this.host.pool.push(Promise.resolve(proc));
        else {
          waiter?.(null);
          this.host.dispose(proc);
        }
      });
    this.host.track(done);
  }

  close(): void {
    for (const waiter of this.waiters.splice(0)) waiter(null);
  }
}
