import type { JournalEntryInput, ReplayStep } from '../spec/index.ts';
import { isOversizeStandIn } from './call-size-limits.ts';

/**
 * The replay script for a driver that serves recorded outcomes itself (`supportsReplayScript`): every journaled
 * outcome with its call's journaled tool and arguments, in journal order, which is delivery order. Null when the
 * journal holds something a script cannot say (an outcome without its intent, a call with two outcomes, arguments over their bound); the
 * JournalingHost then serves the replay as before.
 */
export function buildReplayScript(
  recorded: readonly JournalEntryInput[],
  /** The guest clock for an outcome journaled without one (the host would read the start clock). */
  fallbackClock: number,
): ReplayStep[] | null {
  const intents = new Map<string, { tool: string; args: string }>();
  const served = new Set<string>();
  const steps: ReplayStep[] = [];
  for (const entry of recorded) {
    if (entry.type === 'tool_intent') intents.set(entry.data.call_id, entry.data);
    if (entry.type !== 'tool_outcome') continue;
    const { call_id: callId, ok, payload, clock } = entry.data;
    const intent = intents.get(callId);
    // A call refused for its arguments' size is journaled with a stand-in for them: the host checks it again.
    if (!intent || served.has(callId) || isOversizeStandIn(intent.args)) return null;
    served.add(callId);
    steps.push({ callId, tool: intent.tool, args: intent.args, ok, payload, clock: clock ?? fallbackClock });
  }
  return steps;
}
