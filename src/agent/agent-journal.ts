import { callIdInStep, driverCallId } from '../spec/index.ts';
import type {
  ChatMessage,
  JournalEntryInput,
  LogEntry,
  ModelToolCall,
  NotRepeatedCall,
  ReplyViolation,
} from '../spec/index.ts';
import { REPLAY_ENTRIES } from '../spec/index.ts';

/** How a step ended, as its `step_result` entry holds it. */
export interface StepResult {
  readonly step: number;
  readonly ok: boolean;
  /** The step called `final_answer(value)` (code mode): the task's answer is `output`. */
  readonly final: boolean;
  /** Tagged JSON of the step's value (code mode). */
  readonly output: string | null;
  readonly error: StepError | null;
  readonly logs: readonly LogEntry[];
  /** Function-calling mode: what each call of the reply gave, in the reply's order. */
  readonly calls?: readonly CallResult[];
  /** A retried step: calls taken over from the failed steps before it (ADR 0034). */
  readonly carried?: number;
  /** Calls of the failed steps before it that changed the world and were not made again. */
  readonly not_repeated?: readonly NotRepeatedCall[];
}

export interface StepError {
  readonly code: string;
  readonly name: string;
  readonly message: string;
  /** Line within the step's code. */
  readonly line?: number;
}

export interface CallResult {
  readonly id: string;
  readonly name: string;
  readonly ok: boolean;
  /** What the model is told: the result as JSON, or the error. */
  readonly content: string;
}

export interface StepReply {
  readonly content: string | null;
  readonly toolCalls: readonly ModelToolCall[];
  /** `length` when the reply was cut off at the token limit. */
  readonly finishReason?: string;
  /** Where the streamed reply was stopped because its value could not become valid (ADR 0057). */
  readonly violation?: ReplyViolation;
}

/** One model round trip and what came of it. */
export interface AgentStep {
  readonly step: number;
  /** The messages the step's request added to the conversation. */
  readonly sent: readonly ChatMessage[];
  readonly reply: StepReply | null;
  /** The program the step ran (a `code_block`), once journaled. */
  readonly code: string | null;
  readonly result: StepResult | null;
}

type MutableStep = { -readonly [K in keyof Omit<AgentStep, 'step'>]: AgentStep[K] };

/** Reads an instruction task's journal into its steps, oldest first (the last may be unfinished). */
export function readAgentSteps(journal: readonly JournalEntryInput[]): AgentStep[] {
  const steps = new Map<number, MutableStep>();
  const at = (step: number) => {
    let s = steps.get(step);
    if (!s) steps.set(step, (s = { sent: [], reply: null, code: null, result: null }));
    return s;
  };
  for (const entry of journal) {
    switch (entry.type) {
      case 'model_request':
        at(entry.data.step).sent = entry.data.messages;
        break;
      case 'model_reply': {
        const d = entry.data;
        at(d.step).reply = {
          content: d.content,
          toolCalls: d.tool_calls,
          ...(d.finish_reason === undefined ? {} : { finishReason: d.finish_reason }),
          ...(d.violation === undefined ? {} : { violation: d.violation }),
        };
        break;
      }
      case 'code_block':
        at(entry.data.block).code = entry.data.code ?? null;
        break;
      case 'step_result':
        at(entry.data.step).result = entry.data;
        break;
      default:
        break;
    }
  }
  return [...steps.entries()].sort(([a], [b]) => a - b).map(([step, s]) => ({ step, ...s }));
}

// `for_call`: a tool's request for input mid-call names its call (ADR 0047).
const ID_FIELDS = ['call_id', 'approval_id', 'for_call'] as const;

/** Entries the driver's execution writes, with their call ids made the task's. */
export function toJournalIds(step: number, entries: readonly JournalEntryInput[]): JournalEntryInput[] {
  return entries.map((e) => mapIds(e, (id) => callIdInStep(step, id)));
}

/**
 * The recorded entries an execution of `step` replays: those of the earlier successful steps (their code runs
 * again first) and the step's own, each with the call ids its driver gives.
 */
export function recordedFor(journal: readonly JournalEntryInput[], step: number, rerun: ReadonlySet<number>) {
  const out: JournalEntryInput[] = [];
  let segment: number | null = null;
  for (const entry of journal) {
    if (entry.type === 'code_block') segment = entry.data.block;
    else if (entry.type === 'step_result' || entry.type === 'model_request') segment = null;
    else if (segment !== null && (segment === step || rerun.has(segment)) && REPLAY_ENTRIES.has(entry.type)) {
      const of = segment;
      out.push(mapIds(entry, (id) => driverCallId(of, id) ?? id));
    }
  }
  return out;
}

/** The entry with its id fields mapped; every other field, and so its type's shape, is kept. */
function mapIds(entry: JournalEntryInput, map: (id: string) => string): JournalEntryInput {
  const fields = entry.data as Readonly<Record<string, unknown>>;
  if (!ID_FIELDS.some((f) => typeof fields[f] === 'string')) return { ...entry };
  const data: Record<string, unknown> = { ...fields };
  for (const f of ID_FIELDS) if (typeof data[f] === 'string') data[f] = map(data[f]);
  return { type: entry.type, data } as JournalEntryInput;
}

/** The entries a step's own execution journaled (its calls, under the task's ids), in journal order. */
export function stepSegment(journal: readonly JournalEntryInput[], step: number): JournalEntryInput[] {
  const out: JournalEntryInput[] = [];
  let inside = false;
  for (const entry of journal) {
    if (entry.type === 'code_block') inside = entry.data.block === step;
    else if (entry.type === 'step_result' || entry.type === 'model_request') inside = false;
    else if (inside) out.push(entry);
  }
  return out;
}
