import type { WorkerReplayStep } from '../replay-steps.ts';

export { toWorkerSteps } from '../replay-steps.ts';
export type { WorkerReplayStep } from '../replay-steps.ts';

/** What the script drives: the execution it replays into. */
export interface ReplaySink {
  /** The execution ended: nothing more is delivered. */
  readonly ended: boolean;
  deliverNow(callId: number, ok: boolean, payload: string, clockMs: number): void;
  /** Tells the host that the execution is live from the next delivery on. */
  announceReplayDone(): void;
}

/**
 * How long a replay delivers outcomes before it lets the worker's other executions and messages have a turn. A
 * replay is guest CPU like any other (ADR 0003); aborts reach the guest through the interrupt flag regardless.
 */
export const REPLAY_SLICE_MS = 10;

// A step's state: 0 until its call is issued, then ISSUED (delivered in its turn) or DROPPED (other wire text).
const ISSUED = 1;
const DROPPED = 2;

/**
 * The replay script inside a sandbox worker: it answers the guest calls it recorded, in recorded order, with no
 * round trip to the main thread; host outcomes that arrive meanwhile are held until the script is through.
 */
export class WorkerReplay {
  private readonly position = new Map<number, number>();
  private readonly state: Uint8Array;
  private next = 0;
  private readonly held: Omit<WorkerReplayStep, 'tool' | 'args'>[] = [];
  private pumping = false;
  private announced = false;
  private released = false;

  constructor(
    private readonly steps: readonly WorkerReplayStep[],
    /** `namespace.name` of each tool binding, by index. */
    private readonly toolNames: readonly string[],
  ) {
    this.state = new Uint8Array(steps.length);
    steps.forEach((s, i) => this.position.set(s.callId, i));
  }

  /** Whether every scripted outcome has been delivered (the execution is live). */
  get through(): boolean {
    return this.released;
  }

  /** Whether the script answers this call: its id is a step's and its wire text is the step's. */
  claim(callId: number, tool: number, payload: string): boolean {
    const pos = this.released ? undefined : this.position.get(callId);
    const step = pos === undefined ? undefined : this.steps[pos];
    if (pos === undefined || step === undefined) return false;
    // The same wire form as the host's journal: a timer is `timer` with its delay as text.
    const matches =
      tool === -1
        ? step.tool === 'timer' && step.args === String(Number(JSON.parse(payload)))
        : step.tool === this.toolNames[tool] && step.args === payload;
    this.state[pos] = matches ? ISSUED : DROPPED;
    return matches;
  }

  /** Keeps a host outcome until the script is through; false once it is (deliver it now). */
  hold(callId: number, ok: boolean, payload: string, clockMs: number): boolean {
    if (this.released) return false;
    this.held.push({ callId, ok, payload, clockMs });
    return true;
  }

  /**
   * Delivers every scripted outcome whose turn has come, one at a time (each delivery drains the guest's jobs,
   * which may issue the next calls), then the held host outcomes once the script is through. Called after every
   * guest turn; a nested call (from a delivery) is a no-op. Yields to the event loop after a slice.
   */
  pump(sink: ReplaySink): void {
    if (this.pumping || this.released) return;
    this.pumping = true;
    const sliceEnd = performance.now() + REPLAY_SLICE_MS;
    try {
      for (let step = this.take(); step !== null; step = this.take()) {
        if (sink.ended) return;
        // Announced before the last delivery: what the guest does in response is live.
        if (this.next >= this.steps.length) this.announce(sink);
        sink.deliverNow(step.callId, step.ok, step.payload, step.clockMs);
        if (performance.now() > sliceEnd) {
          setImmediate(() => this.pump(sink));
          return;
        }
      }
    } finally {
      this.pumping = false;
    }
    if (this.next < this.steps.length || sink.ended) return;
    this.announce(sink);
    this.released = true;
    for (const h of this.held.splice(0))
      if (!sink.ended) sink.deliverNow(h.callId, h.ok, h.payload, h.clockMs);
  }

  private announce(sink: ReplaySink): void {
    if (this.announced) return;
    this.announced = true;
    sink.announceReplayDone();
  }

  /** The next scripted outcome if its call has been issued; dropped steps are passed over. */
  private take(): WorkerReplayStep | null {
    while (this.next < this.steps.length) {
      const state = this.state[this.next];
      if (state === DROPPED) this.next += 1;
      else if (state === ISSUED) return this.steps[this.next++] ?? null;
      else return null;
    }
    return null;
  }
}
