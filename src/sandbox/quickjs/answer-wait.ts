interface Pending {
  readonly tool: number;
  readonly sentAt: number;
  /** Polled for although its tool was slow last time: the probe that lets a tool turn quick again. */
  readonly probe: boolean;
}

/** Every this many calls of slow tools, one is polled for anyway (its cost: one window in that many calls). */
export const SLOW_PROBE_EVERY = 16;

/**
 * Whether the worker should poll for a tool's answer rather than sleep (ADR 0007): only while a call is out whose
 * tool answered within the spin window last time (or has not answered yet). A slow tool (a fetch, a model call)
 * would only burn the window and take a core from the host doing its I/O; its answer wakes the worker as usual.
 * What a tool took is measured at every answer, and a sleeping worker's measure includes its own wake-up, which
 * alone can exceed the window on a busy machine: so one call in SLOW_PROBE_EVERY of a slow tool is polled for
 * anyway, and a tool that turned quick is seen to.
 */
export class AnswerWait {
  readonly #spinMs: number;
  readonly #pending = new Map<number, Map<number, Pending>>();
  /** Per execution, the tools whose last answer came after the window. */
  readonly #slow = new Map<number, Set<number>>();
  #quickOut = 0;
  #slowSent = 0;

  constructor(spinMicros: number) {
    this.#spinMs = spinMicros / 1000;
  }

  /** A call of `tool` (its index in the execution's bindings) went to the host. */
  sent(execId: number, callId: number, tool: number, now: number): void {
    let calls = this.#pending.get(execId);
    if (calls === undefined) this.#pending.set(execId, (calls = new Map<number, Pending>()));
    const slow = this.#isSlow(execId, tool);
    const probe = slow && ++this.#slowSent % SLOW_PROBE_EVERY === 0;
    calls.set(callId, { tool, sentAt: now, probe });
    if (!slow || probe) this.#quickOut += 1;
  }

  /** Its answer arrived. */
  answered(execId: number, callId: number, now: number): void {
    const calls = this.#pending.get(execId);
    const call = calls?.get(callId);
    if (calls === undefined || call === undefined) return;
    calls.delete(callId);
    const wasSlow = this.#isSlow(execId, call.tool);
    if (!wasSlow || call.probe) this.#quickOut -= 1;
    const isSlow = now - call.sentAt > this.#spinMs;
    if (isSlow === wasSlow) return;
    let slow = this.#slow.get(execId);
    if (slow === undefined) this.#slow.set(execId, (slow = new Set()));
    if (isSlow) slow.add(call.tool);
    else slow.delete(call.tool);
    // The tool changed class under its calls still out: count them again.
    if (calls.size > 0) this.#recount();
  }

  /** The execution ended: its calls will not be answered to it. */
  ended(execId: number): void {
    this.#pending.delete(execId);
    this.#slow.delete(execId);
    this.#recount();
  }

  /** A call is out whose answer is likely within the window. */
  get worthPolling(): boolean {
    return this.#quickOut > 0;
  }

  #isSlow(execId: number, tool: number): boolean {
    return this.#slow.get(execId)?.has(tool) ?? false;
  }

  #recount(): void {
    let quick = 0;
    for (const [execId, calls] of this.#pending) {
      for (const call of calls.values()) if (call.probe || !this.#isSlow(execId, call.tool)) quick += 1;
    }
    this.#quickOut = quick;
  }
}
