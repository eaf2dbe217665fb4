import type { TaskEvent } from './types.ts';

/**
 * How a call stands: `replayed` ran in an earlier run and was answered from the journal in a later one;
 * `carried` was taken over from an earlier attempt (ADR 0034) and never ran here; `unfinished` has no outcome and
 * will get none in this run (the task ended or paused).
 */
export type CallStatus =
  'ok' | 'error' | 'replayed' | 'carried' | 'waiting-approval' | 'waiting-input' | 'running' | 'unfinished';

/** One tool call on the waterfall's time axis (epoch ms, from the journal's times). */
export interface WaterfallCall {
  readonly callId: string;
  readonly tool: string;
  readonly status: CallStatus;
  /** When the program asked for it (its intent was journaled). */
  readonly askedAt: number;
  /** When it began to run: its intent, or its start once approved or retried (a human's wait is not its time). */
  readonly start: number;
  /** When its outcome was journaled; for a call without one, the axis's end. */
  readonly end: number;
  /** Whether it has an outcome (`end` is its own, not the axis's). */
  readonly ended: boolean;
}

export interface Waterfall {
  readonly calls: readonly WaterfallCall[];
  /** The axis: from the first call's asking to the last end. */
  readonly from: number;
  readonly to: number;
  /** The most calls that ran at one time. */
  readonly concurrency: number;
}

interface Draft {
  callId: string;
  tool: string;
  carried: boolean;
  askedAt: number;
  start: number;
  end: number | null;
  ok: boolean;
  outcomeSeq: number;
  approval: 'none' | 'asked' | 'decided';
  input: boolean;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The task's tool calls from its journal, in the order the program asked for them, each from its start to its
 * end. `running`: whether the task runs now (a call without an outcome then still runs; else it waits or is
 * unfinished). Calls without an outcome end at the newest event's time, so the axis does not grow while no one
 * acts on a paused task.
 */
export function waterfall(events: readonly TaskEvent[], running: boolean): Waterfall {
  const calls = new Map<string, Draft>();
  const approvals = new Map<string, string>();
  let lastAttempt = 0;
  let latest = 0;
  for (const e of events) {
    const at = Date.parse(e.created_at);
    if (Number.isFinite(at)) latest = Math.max(latest, at);
    if (e.source === 'audit') continue;
    const d = e.data;
    const call = calls.get(text(d.call_id));
    switch (e.type) {
      case 'tool_intent': {
        // A read's intent comes with its outcome and says when its tool started (ADR 0047, amended 2026-12-07).
        const started = typeof d.started_at === 'number' ? d.started_at : at;
        calls.set(text(d.call_id), {
          callId: text(d.call_id),
          tool: text(d.tool),
          carried: typeof d.carried_from === 'object' && d.carried_from !== null,
          askedAt: started,
          start: started,
          end: null,
          ok: false,
          outcomeSeq: 0,
          approval: 'none',
          input: false,
        });
        break;
      }
      case 'tool_outcome':
        if (call) {
          call.end = at;
          call.ok = d.ok === true;
          call.outcomeSeq = e.seq;
        }
        break;
      case 'approval_request':
        approvals.set(text(d.approval_id), text(d.call_id));
        if (call) call.approval = 'asked';
        break;
      case 'approval_decision': {
        const asked = calls.get(approvals.get(text(d.approval_id)) ?? '');
        if (asked) asked.approval = 'decided';
        break;
      }
      case 'input_request':
        if (call) call.input = true;
        break;
      case 'input_provided':
      case 'input_timeout':
        if (call) call.input = false;
        break;
      case 'control':
        if (d.action === 'attempt') lastAttempt = e.seq;
        if ((d.action === 'approved_call_started' || d.action === 'retry_started') && call) call.start = at;
        break;
      default:
        break;
    }
  }
  const out = [...calls.values()].map((c): WaterfallCall => {
    const status: CallStatus = c.carried
      ? 'carried'
      : c.end !== null
        ? !c.ok
          ? 'error'
          : c.outcomeSeq < lastAttempt
            ? 'replayed'
            : 'ok'
        : c.approval === 'asked'
          ? 'waiting-approval'
          : c.input
            ? 'waiting-input'
            : running
              ? 'running'
              : 'unfinished';
    const end = c.end ?? Math.max(latest, c.start);
    return {
      callId: c.callId,
      tool: c.tool,
      status,
      askedAt: c.askedAt,
      start: c.start,
      end,
      ended: c.end !== null,
    };
  });
  const from = Math.min(...out.map((c) => c.askedAt));
  const to = Math.max(...out.map((c) => c.end));
  return { calls: out, from, to, concurrency: mostAtOnce(out) };
}

/** The most calls running at one moment (a call ending at t does not overlap one starting at t). */
function mostAtOnce(calls: readonly WaterfallCall[]): number {
  const edges = calls
    .filter((c) => c.status !== 'carried')
    .flatMap((c) => [
      { t: c.start, d: 1 },
      { t: c.end, d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.d;
    most = Math.max(most, now);
  }
  return most;
}
