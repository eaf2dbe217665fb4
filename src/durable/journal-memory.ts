import type { HostOutcome, JournalEntryInput } from '../spec/index.ts';
import { toOutcome } from './journal-wire.ts';

/** What an execution's earlier journal entries say about its calls, as the JournalingHost consults it. */
export class JournalMemory {
  readonly intents = new Map<string, { tool: string; args: string }>();
  /** Recorded outcomes in delivery order, and each call's place in that order. */
  readonly outcomes: { readonly callId: string; readonly outcome: HostOutcome }[] = [];
  readonly position = new Map<string, number>();
  /** Calls that asked for approval, and those approved that began running (then their effect decides). */
  readonly requested = new Set<string>();
  readonly started = new Set<string>();
  readonly decisions = new Map<string, { decision: string; reason: string }>();
  /** Input waits asked for, and the answers (a value's tagged JSON, or null for a timeout) by call id. */
  readonly inputRequested = new Set<string>();
  readonly inputs = new Map<string, string | null>();
  /** A human's decision on a lost unsafe call; spent once the retried call starts. */
  readonly attention = new Map<string, { action: string; payload: string | null }>();
  /** Calls whose execution ended after their intent was journaled and before the tool started. */
  readonly notStarted = new Set<string>();

  constructor(recorded: readonly JournalEntryInput[]) {
    for (const entry of recorded) {
      const d = entry.data as Record<string, unknown>;
      const callId = String(d.call_id);
      switch (entry.type) {
        case 'tool_intent':
          this.intents.set(callId, { tool: String(d.tool), args: String(d.args) });
          break;
        case 'tool_outcome':
          this.position.set(callId, this.outcomes.length);
          this.outcomes.push({ callId, outcome: toOutcome(d) });
          break;
        case 'approval_request':
          this.requested.add(String(d.approval_id));
          break;
        case 'approval_decision':
          this.decisions.set(String(d.approval_id), {
            decision: String(d.decision),
            reason: typeof d.reason === 'string' ? d.reason : '',
          });
          break;
        case 'input_request':
          this.inputRequested.add(callId);
          break;
        case 'input_provided':
          this.inputs.set(callId, String(d.value));
          break;
        case 'input_timeout':
          this.inputs.set(callId, null);
          break;
        case 'attention_decision':
          this.attention.set(callId, {
            action: String(d.action),
            payload: typeof d.payload === 'string' ? d.payload : null,
          });
          break;
        case 'control':
          if (d.action === 'approved_call_started') this.started.add(callId);
          // A lost call that a human chose to retry, or one that never started, began running again: a crash
          // from here leaves it in doubt like any other.
          if (d.action === 'retry_started') {
            this.attention.delete(callId);
            this.notStarted.delete(callId);
          }
          if (d.action === 'not_started') this.notStarted.add(callId);
          break;
        default:
          break;
      }
    }
  }
}
