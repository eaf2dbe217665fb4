import { originKey, unknownEntry } from '../spec/index.ts';
import type {
  RefusalName,
  CallOrigin,
  HostOutcome,
  JournalEntryInput,
  JournalEntryInputOf,
  RevisedFrom,
} from '../spec/index.ts';
import { toOutcome } from './journal-wire.ts';
import type { Wire } from './journal-wire.ts';

/** What the journal says about an execution's calls, as a call's decision reads it (`decideCall`). */
export interface CallState {
  /** Journaled intents by call id. */
  readonly intents: ReadonlyMap<string, Wire>;
  /** Each recorded outcome's place in delivery order. */
  readonly positions: ReadonlyMap<string, number>;
  /** Calls that asked for approval, and those approved that began running (then their effect decides). */
  readonly requested: ReadonlySet<string>;
  readonly started: ReadonlySet<string>;
  /** Decisions on approvals, by approval id (the call's id). */
  readonly decisions: ReadonlyMap<
    string,
    { readonly decision: 'approve' | 'reject'; readonly reason: string; readonly expired: boolean }
  >;
  /** Input waits asked for, and the answers (a value's tagged JSON, or null for a timeout) by call id. */
  readonly inputRequested: ReadonlySet<string>;
  readonly inputs: ReadonlyMap<string, string | null>;
  /**
   * Tools' requests for input mid-call (`ToolContext.requestInput`), by the tool call's id, in the order asked:
   * each request's id (its input's call id) and what it asked (`elicitationKey`).
   */
  readonly elicited: ReadonlyMap<string, readonly { readonly id: string; readonly key: string }[]>;
  /** A human's decision on a lost unsafe call; spent once the retried call starts. */
  readonly attention: ReadonlyMap<
    string,
    { readonly action: 'retry' | 'skip'; readonly payload: string | null }
  >;
  /** Calls whose execution ended after their intent was journaled and before the tool started. */
  readonly notStarted: ReadonlySet<string>;
  /** Earlier attempts' calls this execution took over (`originKey`), so each is taken once (ADR 0034). */
  readonly carried: ReadonlySet<string>;
  /** This execution's calls taken over, by call id: where each one's outcome comes from. */
  readonly carriedCalls: ReadonlyMap<string, CallOrigin>;
  /** A revision's calls held for a human, with the earlier attempt's call each stands beside. */
  readonly held: ReadonlyMap<string, RevisedFrom>;
  /** Calls a budget refused (their intent says which, `over_budget`): they never run (ADR 0044). */
  readonly refused: ReadonlyMap<string, RefusalName>;
}

/** What a tool's request for input asked, to tell the same request when a call made again asks it again. */
export function elicitationKey(name: string, message: string, schemaJson: string): string {
  return JSON.stringify([name, message, schemaJson]);
}

/** The entries the host writes about a call's progress besides its intent and outcome: they change its state. */
export type CallMark =
  | JournalEntryInputOf<'tool_intent'>
  | JournalEntryInputOf<'approval_request'>
  | JournalEntryInputOf<'input_request'>
  | JournalEntryInputOf<'control'>;

/**
 * An execution's call state: folded from its earlier journal entries, then from the marks the JournalingHost
 * journals as its calls go on. The only place that state changes.
 */
export class JournalMemory implements CallState {
  readonly #intents = new Map<string, Wire>();
  readonly #outcomes: { readonly callId: string; readonly outcome: HostOutcome }[] = [];
  readonly #positions = new Map<string, number>();
  readonly #requested = new Set<string>();
  readonly #started = new Set<string>();
  readonly #decisions = new Map<
    string,
    { decision: 'approve' | 'reject'; reason: string; expired: boolean }
  >();
  readonly #inputRequested = new Set<string>();
  readonly #inputs = new Map<string, string | null>();
  readonly #elicited = new Map<string, { id: string; key: string }[]>();
  readonly #attention = new Map<string, { action: 'retry' | 'skip'; payload: string | null }>();
  readonly #notStarted = new Set<string>();
  readonly #carried = new Set<string>();
  readonly #carriedCalls = new Map<string, CallOrigin>();
  readonly #held = new Map<string, RevisedFrom>();
  readonly #refused = new Map<string, RefusalName>();

  constructor(recorded: readonly JournalEntryInput[]) {
    for (const entry of recorded) this.#fold(entry);
  }

  get intents(): ReadonlyMap<string, Wire> {
    return this.#intents;
  }
  get positions(): ReadonlyMap<string, number> {
    return this.#positions;
  }
  get requested(): ReadonlySet<string> {
    return this.#requested;
  }
  get started(): ReadonlySet<string> {
    return this.#started;
  }
  get decisions(): CallState['decisions'] {
    return this.#decisions;
  }
  get inputRequested(): ReadonlySet<string> {
    return this.#inputRequested;
  }
  get inputs(): ReadonlyMap<string, string | null> {
    return this.#inputs;
  }
  get elicited(): CallState['elicited'] {
    return this.#elicited;
  }
  get attention(): CallState['attention'] {
    return this.#attention;
  }
  get notStarted(): ReadonlySet<string> {
    return this.#notStarted;
  }
  get carried(): ReadonlySet<string> {
    return this.#carried;
  }
  get carriedCalls(): ReadonlyMap<string, CallOrigin> {
    return this.#carriedCalls;
  }
  get held(): ReadonlyMap<string, RevisedFrom> {
    return this.#held;
  }
  get refused(): ReadonlyMap<string, RefusalName> {
    return this.#refused;
  }

  /** Recorded outcomes in delivery order. */
  get outcomes(): readonly { readonly callId: string; readonly outcome: HostOutcome }[] {
    return this.#outcomes;
  }

  /** A mark the host journals now: its call's state changes as a replay of the journal would change it. */
  mark(entry: CallMark): void {
    this.#fold(entry);
  }

  #fold(entry: JournalEntryInput): void {
    switch (entry.type) {
      case 'tool_intent':
        this.#intents.set(entry.data.call_id, { tool: entry.data.tool, args: entry.data.args });
        if (entry.data.carried_from) {
          this.#carried.add(originKey(entry.data.carried_from));
          this.#carriedCalls.set(entry.data.call_id, entry.data.carried_from);
        }
        if (entry.data.over_budget) this.#refused.set(entry.data.call_id, entry.data.over_budget);
        break;
      case 'tool_outcome':
        this.#positions.set(entry.data.call_id, this.#outcomes.length);
        this.#outcomes.push({ callId: entry.data.call_id, outcome: toOutcome(entry.data) });
        break;
      case 'approval_request':
        this.#requested.add(entry.data.approval_id);
        break;
      case 'approval_decision':
        this.#decisions.set(entry.data.approval_id, {
          decision: entry.data.decision,
          reason: entry.data.reason ?? '',
          expired: entry.data.expired === true,
        });
        break;
      case 'input_request':
        this.#inputRequested.add(entry.data.call_id);
        if (entry.data.for_call !== undefined) {
          const d = entry.data;
          const asked = this.#elicited.get(d.for_call as string) ?? [];
          asked.push({ id: d.call_id, key: elicitationKey(d.name, d.message ?? '', d.schema ?? 'null') });
          this.#elicited.set(d.for_call as string, asked);
        }
        break;
      case 'input_provided':
        this.#inputs.set(entry.data.call_id, entry.data.value);
        break;
      case 'input_timeout':
        this.#inputs.set(entry.data.call_id, null);
        break;
      case 'attention_decision':
        this.#attention.set(entry.data.call_id, {
          action: entry.data.action,
          payload: entry.data.payload ?? null,
        });
        break;
      case 'control':
        this.#control(entry.data);
        break;
      case 'task_input':
      case 'manifest':
      case 'model_request':
      case 'model_reply':
      case 'code_block':
      case 'step_result':
      case 'clock':
      case 'carry_offer':
        break;
      default:
        unknownEntry(entry);
    }
  }

  #control(control: JournalEntryInputOf<'control'>['data']): void {
    switch (control.action) {
      case 'approved_call_started':
        this.#started.add(control.call_id);
        break;
      // A lost call that a human chose to retry, or one that never started, began running again: a crash from
      // here leaves it in doubt like any other.
      case 'retry_started':
        this.#attention.delete(control.call_id);
        this.#notStarted.delete(control.call_id);
        this.#held.delete(control.call_id);
        break;
      case 'not_started':
        this.#notStarted.add(control.call_id);
        break;
      case 'revision_held':
        this.#held.set(control.call_id, control.earlier);
        break;
      case 'attempt':
      case 'pause':
      case 'resume':
      case 'cancel':
      case 'deadline':
      case 'await_approval':
      case 'await_input':
      case 'needs_attention':
      case 'retry':
      case 'incompatible':
      case 'fail':
      case 'accept_changed_tools':
        break;
      default:
        unknownEntry(control);
    }
  }
}
