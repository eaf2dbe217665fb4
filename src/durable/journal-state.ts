import { decodeValue, sha256Hex } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import { programSource } from '../spec/index.ts';
import type { AttentionCallData, CallOrigin, JournalEntry, TaskRecord } from '../spec/index.ts';
import { earliestExpiry, pendingApprovals } from './pending-approvals.ts';

/** An `input.wait` the host has not answered yet. */
export interface PendingInput {
  readonly callId: string;
  readonly name: string;
  /** Epoch ms after which the wait fails with INPUT_TIMEOUT; null waits forever. */
  readonly deadline: number | null;
  /** A tool's request mid-call (an MCP elicitation): the call, what it says, the answer's JSON Schema. */
  readonly forCall?: string;
  readonly message?: string;
  readonly schema?: unknown;
}

/** What a journaled input request shows besides its name: a tool's request's call, message and schema. */
export function inputRequestParts(data: {
  readonly for_call?: string;
  readonly message?: string;
  readonly schema?: string;
}): Pick<PendingInput, 'forCall' | 'message' | 'schema'> {
  if (data.for_call === undefined) return {};
  let schema: unknown = null;
  try {
    schema = JSON.parse(data.schema ?? 'null');
  } catch {
    // Journaled by codecall as JSON; a damaged one shows as null.
  }
  return { forCall: data.for_call, message: data.message ?? '', schema };
}

/** The lost unsafe call a paused `needs_attention` task waits on a human for. */
export interface AttentionCall {
  readonly callId: string;
  readonly tool: string;
  readonly arguments: unknown;
  /** A revision's call held beside the earlier attempt's completed one (ADR 0034). */
  readonly earlier?: { readonly origin: CallOrigin; readonly tool: string; readonly arguments: unknown };
}

/** Input waits in the journal without an answer (provided or timed out), oldest first. */
export function pendingInputs(journal: readonly JournalEntry[]): PendingInput[] {
  const answered = new Set<string>();
  for (const e of journal)
    if (e.type === 'input_provided' || e.type === 'input_timeout') answered.add(e.data.call_id);
  const pending: PendingInput[] = [];
  for (const e of journal) {
    if (e.type !== 'input_request' || answered.has(e.data.call_id)) continue;
    pending.push({
      callId: e.data.call_id,
      name: e.data.name,
      deadline: e.data.deadline,
      ...inputRequestParts(e.data),
    });
  }
  return pending;
}

/** The earliest deadline among these waits, or null. */
export function earliestDeadline(waits: readonly PendingInput[]): number | null {
  let at: number | null = null;
  for (const w of waits) if (w.deadline !== null && (at === null || w.deadline < at)) at = w.deadline;
  return at;
}

/** The earlier of two wake-ups (null: none). */
export function earlier(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** When a paused task must wake: the earliest deadline of its input waits or expiry of its approvals, or null. */
export function nextWake(journal: readonly JournalEntry[]): number | null {
  return earlier(earliestDeadline(pendingInputs(journal)), earliestExpiry(pendingApprovals(journal)));
}

/** The first call of the last `needs_attention` pause still without a decision (attentionCalls). */
export function attentionCall(journal: readonly JournalEntry[]): AttentionCall | null {
  return attentionCalls(journal)[0] ?? null;
}

/**
 * The calls of the last `needs_attention` pause that no decision was journaled for since, in the order raised;
 * empty when the pause came without a call (changed tools) or every call is decided.
 */
export function attentionCalls(journal: readonly JournalEntry[]): AttentionCall[] {
  const decided = new Set<string>();
  for (let i = journal.length - 1; i >= 0; i--) {
    const e = journal[i];
    if (e?.type === 'attention_decision') decided.add(e.data.call_id);
    if (e?.type === 'control' && e.data.action === 'incompatible') return [];
    if (e?.type === 'control' && e.data.action === 'needs_attention') {
      const { call_id: callId, tool, args } = e.data;
      // Older journals name one call; newer ones list them all (the first is also call_id).
      const raised: readonly (Omit<AttentionCallData, 'args'> & { args: unknown })[] =
        e.data.calls ?? (typeof callId === 'string' ? [{ call_id: callId, tool: String(tool), args }] : []);
      return raised
        .filter((c) => !decided.has(c.call_id))
        .map((c) => ({
          callId: c.call_id,
          tool: String(c.tool),
          arguments: typeof c.args === 'string' ? decodeValue(c.args) : null,
          ...(typeof c.earlier?.args === 'string'
            ? {
                earlier: {
                  origin: c.earlier.origin,
                  tool: c.earlier.tool,
                  arguments: decodeValue(c.earlier.args),
                },
              }
            : {}),
        }));
    }
  }
  return [];
}

/** Completed tool calls (outcomes journaled), for progress. */
export function completedCalls(journal: readonly JournalEntry[]): number {
  let n = 0;
  for (const e of journal) if (e.type === 'tool_outcome') n++;
  return n;
}

/**
 * The task's stored program must be the one its journal was started with (the `task_input` entry is in the
 * checksum chain; the task row is not): a changed program would replay against another's outcomes.
 */
export function checkTaskInput(
  task: TaskRecord,
  journal: readonly JournalEntry[],
  codeHash: string,
): CodecallError | null {
  const first = journal.find((e) => e.type === 'task_input');
  if (first?.type !== 'task_input') return null;
  const recorded = first.data;
  const same =
    recorded.code_hash === codeHash &&
    recorded.language === task.input.language &&
    recorded.seed === task.input.seed;
  if (same) return null;
  return new CodecallError(
    'CHECKPOINT_CORRUPT',
    `task ${task.id}: its stored program (code, language or seed) does not match the one its journal started with`,
    { details: { task_id: task.id, seq: 1 } },
  );
}

/** The hash `task_input` and `code_block` entries carry (the store's createTask writes the same). */
export function codeHashOf(task: TaskRecord): string {
  return sha256Hex(programSource(task.input));
}
