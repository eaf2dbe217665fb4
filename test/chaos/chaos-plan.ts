// A chaos run's plan, all from one seed: the tasks (programs of single calls and Promise.all fan-outs over the
// four effects, some needing approval) with their right results, and the faults in the order they strike.
import { rng } from '../durable/crash-fixture.ts';
import { resultOf, TOOL_OF } from './chaos-tools.ts';
import type { Effect } from './chaos-tools.ts';

export interface PlannedCall {
  readonly op: string;
  readonly effect: Effect;
  readonly approve: boolean;
  readonly ms: number;
}

export interface PlannedTask {
  readonly index: number;
  readonly code: string;
  /** Each step: one call, or several run by Promise.all. */
  readonly steps: readonly (readonly PlannedCall[])[];
  readonly expected: readonly string[];
}

/**
 * `kill`: SIGKILL a server (and start one if none is left); `second`: start another server on the database;
 * `stop`: SIGSTOP a server past its lease, then SIGCONT; `taken-port`: start one on a live server's port (it must
 * fail to listen without claiming anything). A fault strikes once `atEnded` of the tasks have ended
 * (so every fault lands in the middle of the work), `jitterMs` later.
 */
export interface Fault {
  readonly kind: FaultKind;
  readonly atEnded: number;
  readonly jitterMs: number;
}
export type FaultKind = 'kill' | 'second' | 'stop' | 'taken-port';

export interface ChaosPlan {
  readonly seed: number;
  readonly tasks: readonly PlannedTask[];
  readonly faults: readonly Fault[];
}

const EFFECTS: readonly Effect[] = ['unsafe', 'keyed', 'read', 'idempotent'];

export function makePlan(options: {
  seed: number;
  tasks: number;
  faults: number;
  /** SIGKILLs among the faults at least (the rest after the first of each kind are kills then). */
  kills?: number;
}): ChaosPlan {
  const random = rng(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const tasks = Array.from({ length: options.tasks }, (_, index) => {
    let call = 0;
    // Fan-outs ask for approvals more often, so that several wait at once (decided one by one or together).
    const planCall = (fanOut: boolean): PlannedCall => {
      const effect = pick(EFFECTS);
      const approve = (effect === 'unsafe' || effect === 'keyed') && random() < (fanOut ? 0.6 : 0.25);
      return { op: `T${index}.C${call++}`, effect, approve, ms: 20 + Math.floor(random() * 180) };
    };
    const steps = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const width = random() < 0.4 ? 2 + Math.floor(random() * 2) : 1;
      return Array.from({ length: width }, () => planCall(width > 1));
    });
    return {
      index,
      code: programOf(steps),
      steps,
      expected: steps.flat().map((c) => resultOf(c.op, c.effect)),
    };
  });
  // Every kind at least once (a kill first: a crash is the fault that matters most), then seeded picks.
  const kinds: FaultKind[] = ['kill', 'taken-port', 'second', 'stop'];
  const killsLeft = Math.max(0, (options.kills ?? 0) - 1);
  const faults = Array.from({ length: options.faults }, (_, i) => ({
    kind: i < kinds.length ? (kinds[i] as FaultKind) : i - kinds.length < killsLeft ? 'kill' : pick(kinds),
    atEnded: Math.floor(((i + 1) * options.tasks) / (options.faults + 2)),
    jitterMs: Math.floor(random() * 400),
  }));
  return { seed: options.seed, tasks, faults };
}

function programOf(steps: readonly (readonly PlannedCall[])[]): string {
  const call = (c: PlannedCall): string =>
    `tools.${TOOL_OF[c.effect]}(${JSON.stringify({ op: c.op, ms: c.ms, ...(c.approve ? { approve: true } : {}) })})`;
  const lines = steps.map((step) =>
    step.length === 1
      ? `out.push(await ${call(step[0] as PlannedCall)});`
      : `out.push(...(await Promise.all([${step.map(call).join(', ')}])));`,
  );
  return ['const out = [];', ...lines, 'return out;'].join('\n');
}
