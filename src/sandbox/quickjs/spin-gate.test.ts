import { describe, expect, it } from 'vitest';
import { SpinGate, threadSchedStat } from './spin-gate.ts';

/** A thread whose scheduler statistics the test writes: wait ns accumulated so far. */
function fakeThread() {
  const state = { waitNs: 0, reads: 0, supported: true };
  const read = (): readonly [number, number] | undefined => {
    state.reads += 1;
    return state.supported ? [0, state.waitNs] : undefined;
  };
  return { state, read };
}

describe('SpinGate', () => {
  it('stays open while the thread waits little for a CPU, shuts past shutAbove, opens below openBelow', () => {
    const t = fakeThread();
    const gate = new SpinGate({ sampleEveryMs: 50, shutAbove: 0.5, openBelow: 0.1, readSchedStat: t.read });
    expect(gate.open(0)).toBe(true); // the first sample has nothing to compare with
    t.state.waitNs += 2e6; // 2 ms of 50 waiting: 4%
    expect(gate.open(50)).toBe(true);
    t.state.waitNs += 20e6; // 20 ms of the next 50: 40%, a quiet machine's GC threads at worst
    expect(gate.open(100)).toBe(true);
    t.state.waitNs += 30e6; // 30 ms of 50: 60%
    expect(gate.open(149)).toBe(true); // 49 ms since the last sample: not read yet
    expect(gate.open(150)).toBe(false);
    // Between samples the decision holds without reading the kernel again.
    const reads = t.state.reads;
    expect(gate.open(190)).toBe(false);
    expect(t.state.reads).toBe(reads);
    // Asleep, the thread still waits 20%: the machine is busy, the gate stays shut.
    t.state.waitNs += 10e6;
    expect(gate.open(200)).toBe(false);
    // The machine turns quiet: the next sample opens it.
    t.state.waitNs += 1e6;
    expect(gate.open(250)).toBe(true);
  });

  it('stays open where the system has no per-thread scheduler statistics, and stops asking', () => {
    const t = fakeThread();
    t.state.supported = false;
    const gate = new SpinGate({ readSchedStat: t.read });
    expect(gate.open(0)).toBe(true);
    expect(gate.open(1000)).toBe(true);
    expect(t.state.reads).toBe(1);
  });

  it("reads this thread's run and wait times from the kernel on Linux", () => {
    const stat = threadSchedStat();
    if (process.platform !== 'linux') {
      console.warn(`skipping the kernel read: ${process.platform} has no /proc/thread-self/schedstat`);
      return;
    }
    expect(stat).toBeDefined();
    const [run, wait] = stat ?? [0, 0];
    expect(run).toBeGreaterThan(0);
    expect(wait).toBeGreaterThanOrEqual(0);
  });
});
