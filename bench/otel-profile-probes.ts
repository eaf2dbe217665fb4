// Probes of bench/otel-profile.ts: a CPU profile's self time by function, and CPU time by thread.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}
export const addProfile = (into: Map<string, number>, p: Profile) => {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  p.samples.forEach((id, i) => {
    const f = byId.get(id)?.callFrame;
    if (!f) return;
    const where = f.url.replace(/^.*\/(node_modules|dist)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber}`;
    into.set(key, (into.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
};

/** CPU time by thread (Linux: /proc/self/task/N/schedstat, by the thread's name; the main thread apart), us. */
export const threadCpuUs = (): Map<string, number> => {
  const by = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return by; // not Linux
  }
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
      const name =
        tid === String(process.pid) ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim();
      by.set(name, (by.get(name) ?? 0) + ns / 1000);
    } catch {
      // the thread ended meanwhile
    }
  }
  return by;
};

type Proto = { prototype: Record<string, ((...a: unknown[]) => unknown) | undefined> };

/** What the crossing's probe fills, per call (us), and the tool's last run (performance.now(), set by the tool). */
export interface CrossingTiming {
  answer: number[];
  toTool: number[];
  fromTool: number[];
  turn: number[];
  polls: number;
  caught: number;
  toolAt: number;
}

export async function patchCrossing(from: string, timing: CrossingTiming): Promise<void> {
  // The crossing's timing (the quickjs driver's prototypes, patched here only): the host's answer time (a call's
  // message in, its outcome out; split at the tool's run), the guest's turn (an outcome out, the next message in),
  // and how often the main thread's poll after a delivery caught that message (ADR 0007's spin windows: the worker
  // spins 250 us for an answer, the main thread 100 us for the next call, and either stops when the other side
  // was slower last time).
  const { HostExecution } = (await import(join(from, 'sandbox/quickjs/host-execution.js'))) as {
    HostExecution: Proto;
  };
  const { SandboxWorker } = (await import(join(from, 'sandbox/quickjs/sandbox-worker.js'))) as {
    SandboxWorker: Proto;
  };
  const hp = HostExecution.prototype;
  const wp = SandboxWorker.prototype;
  const [onMessage, deliver, pollOnce, handle] = [hp.onMessage, hp.deliver, wp.pollOnce, wp.handle];
  const inAt = new Map<number, number>();
  let outAt = -1;
  let polling = false;
  hp.onMessage = function (this: unknown, msg: unknown) {
    const now = performance.now();
    const m = msg as { type: string; callId?: number };
    if (outAt >= 0) timing.turn.push((now - outAt) * 1000);
    outAt = -1;
    if (m.type === 'call' && m.callId !== undefined) inAt.set(m.callId, now);
    return onMessage?.call(this, msg);
  };
  hp.deliver = function (this: unknown, msg: unknown, ...rest: unknown[]) {
    const now = performance.now();
    const id = (msg as { callId: number }).callId;
    const at = inAt.get(id);
    if (at !== undefined) {
      timing.answer.push((now - at) * 1000);
      if (timing.toolAt >= at) {
        timing.toTool.push((timing.toolAt - at) * 1000);
        timing.fromTool.push((now - timing.toolAt) * 1000);
      }
    }
    inAt.delete(id);
    outAt = now;
    return deliver?.call(this, msg, ...rest);
  };
  wp.pollOnce = function (this: unknown, ...a: unknown[]) {
    timing.polls++;
    polling = true;
    try {
      return pollOnce?.apply(this, a);
    } finally {
      polling = false;
    }
  };
  wp.handle = function (this: unknown, ...a: unknown[]) {
    if (polling) timing.caught++;
    return handle?.apply(this, a);
  };
}
