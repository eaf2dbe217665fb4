import type { JournalEntryInput, ReplayStep } from '../spec/index.ts';

/**
 * The replay script for a driver that serves recorded outcomes itself (`supportsReplayScript`): every journaled
 * outcome with its call's journaled tool and arguments, in journal order, which is delivery order. Null when the
 * journal holds something a script cannot say (an outcome without its intent, a call with two outcomes); the
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
    const d = entry.data;
    const callId = String(d.call_id);
    if (entry.type === 'tool_intent') intents.set(callId, { tool: String(d.tool), args: String(d.args) });
    if (entry.type !== 'tool_outcome') continue;
    const intent = intents.get(callId);
    if (!intent || served.has(callId)) return null;
    served.add(callId);
    steps.push({
      callId,
      tool: intent.tool,
      args: intent.args,
      ok: d.ok === true,
      payload: String(d.payload),
      clock: typeof d.clock === 'number' ? d.clock : fallbackClock,
    });
  }
  return steps;
}
