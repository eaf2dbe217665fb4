import { carriedOrigins, changesTheWorld, completedCalls, notRepeated, withEffects } from '../spec/index.ts';
import type { CarryOver, JournalEntryInput, NotRepeatedCall, ToolEffect } from '../spec/index.ts';
import { stepSegment } from './agent-journal.ts';
import type { AgentStep } from './agent-journal.ts';

/** How a retried step takes over what the failed steps before it did (ADR 0034). */
export interface StepCarryOptions {
  /** A tool's effect by `namespace.name`; undefined for a tool the task does not have. */
  readonly effectOf: (tool: string) => ToolEffect | undefined;
  /** `read` and `idempotent` calls run again instead of being taken over. */
  readonly rerunReads?: boolean;
}

/** The failed steps since the last successful one, oldest first: the attempts a new step revises. */
export function revisedSteps(earlier: readonly AgentStep[]): AgentStep[] {
  const out: AgentStep[] = [];
  for (let i = earlier.length - 1; i >= 0; i--) {
    const s = earlier[i];
    if (!s || s.result?.ok === true) break;
    if (s.code !== null) out.unshift(s);
  }
  return out;
}

/** What a step may take over: the calls the failed steps before it completed; null when there are none. */
export function stepCarry(
  journal: readonly JournalEntryInput[],
  earlier: readonly AgentStep[],
  options: StepCarryOptions,
): CarryOver | null {
  const offers = revisedSteps(earlier).flatMap((s) => completedCalls(stepSegment(journal, s.step)));
  if (offers.length === 0) return null;
  return {
    offers: withEffects(offers, options.effectOf),
    ...(options.rerunReads ? { rerunReads: true } : {}),
  };
}

/** What the step took over, and which calls that changed the world it did not make again. */
export function carryReport(
  journal: readonly JournalEntryInput[],
  step: number,
  carry: CarryOver | null,
): { readonly carried?: number; readonly not_repeated?: NotRepeatedCall[] } {
  if (!carry) return {};
  const taken = carriedOrigins(stepSegment(journal, step));
  const left = notRepeated(carry.offers, taken)
    .filter(changesTheWorld)
    .map((o) => ({ call_id: o.origin.call_id, tool: o.tool, args: o.args }));
  return { carried: taken.size, ...(left.length > 0 ? { not_repeated: left } : {}) };
}
