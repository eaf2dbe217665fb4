import { parseCallId } from '../spec/index.ts';
import type { ReplayStep } from '../spec/index.ts';

/** A replay step as a sandbox receives it: the call id is the driver's number. */
export interface WorkerReplayStep {
  callId: number;
  tool: string;
  args: string;
  ok: boolean;
  payload: string;
  clockMs: number;
}

/** The script in the worker's terms, or why it cannot be (an id this driver never issues, a repeated id). */
export function toWorkerSteps(replay: readonly ReplayStep[]): WorkerReplayStep[] | string {
  const seen = new Set<number>();
  const steps: WorkerReplayStep[] = [];
  for (const step of replay) {
    const id = parseCallId(step.callId);
    if (id === null || id.step !== undefined)
      return `replay step ${JSON.stringify(step.callId)} is not a call id of this driver`;
    const { n } = id;
    if (seen.has(n)) return `replay step ${step.callId} appears twice`;
    seen.add(n);
    steps.push({
      callId: n,
      tool: step.tool,
      args: step.args,
      ok: step.ok,
      payload: step.payload,
      clockMs: step.clock,
    });
  }
  return steps;
}
