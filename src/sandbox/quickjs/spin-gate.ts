import { readFileSync } from 'node:fs';

/**
 * Whether a thread may spin for the other side's next message (ADR 0007) or should sleep on its event loop
 * (ADR 0062). Spinning pays only with a core to spare. On a busy machine the spinner burns its own share of the
 * CPU, the scheduler then ranks it behind the other work, and every wake-up waits: at load 20 on 2 cores polling
 * off ran 1.7-2.5x the calls/s of polling on. The gate asks the kernel directly: the share of the last interval
 * this thread spent runnable but waiting for a CPU (`/proc/thread-self/schedstat`, Linux). Above `shutAbove` (a
 * spinner on a quiet machine waits only for the runtime's own helper threads) the gate shuts, and opens again once a
 * sample finds the sleeping thread waiting less than `openBelow`. Elsewhere (no schedstat) it stays open, as before.
 */
export interface SpinGateOptions {
  /** How often the thread's scheduler statistics are read (ms). */
  readonly sampleEveryMs?: number;
  /** The share of wall time spent waiting for a CPU above which spinning stops. */
  readonly shutAbove?: number;
  /** The share below which a shut gate opens again (lower: a sleeping thread waits less than a spinning one). */
  readonly openBelow?: number;
  /** Reads `[run ns, wait ns]` of the calling thread, or undefined where the system has none. */
  readonly readSchedStat?: () => readonly [number, number] | undefined;
}

const SCHEDSTAT = '/proc/thread-self/schedstat';

export function threadSchedStat(): readonly [number, number] | undefined {
  try {
    const [run, wait] = readFileSync(SCHEDSTAT, 'latin1').split(' ', 2).map(Number);
    return run === undefined || wait === undefined || !Number.isFinite(run) || !Number.isFinite(wait)
      ? undefined
      : [run, wait];
  } catch {
    return undefined;
  }
}

export class SpinGate {
  readonly #sampleEveryMs: number;
  readonly #shutAbove: number;
  readonly #openBelow: number;
  readonly #read: () => readonly [number, number] | undefined;
  #lastAt = Number.NEGATIVE_INFINITY;
  #lastWaitNs = 0;
  #busy = false;
  #unsupported = false;

  constructor(options: SpinGateOptions = {}) {
    this.#sampleEveryMs = options.sampleEveryMs ?? 50;
    this.#shutAbove = options.shutAbove ?? 0.5;
    this.#openBelow = options.openBelow ?? 0.1;
    this.#read = options.readSchedStat ?? threadSchedStat;
  }

  /** Asked before a spin, with the thread's clock (ms): false means sleep on the event loop instead. */
  open(now: number): boolean {
    if (this.#unsupported) return true;
    if (now - this.#lastAt >= this.#sampleEveryMs) this.#sample(now);
    return !this.#busy;
  }

  #sample(now: number): void {
    const stat = this.#read();
    if (stat === undefined) {
      this.#unsupported = true;
      this.#busy = false;
      return;
    }
    const waitNs = stat[1];
    if (Number.isFinite(this.#lastAt)) {
      const share = (waitNs - this.#lastWaitNs) / ((now - this.#lastAt) * 1e6);
      this.#busy = this.#busy ? share >= this.#openBelow : share > this.#shutAbove;
    }
    this.#lastAt = now;
    this.#lastWaitNs = waitNs;
  }
}
