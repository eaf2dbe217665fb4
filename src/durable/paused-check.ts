import type { ExecutionRequest, JournalEntryInput } from '../spec/index.ts';
import type { JournalMark, KeptVm } from './paused-vms.ts';

/** Everything of a request that a resumed VM must have run with: any change and the task replays. */
export function requestFingerprint(
  request: Omit<ExecutionRequest, 'host' | 'clock'>,
  extra: { readonly engine: string; readonly startClock: number; readonly sizes?: unknown },
): string {
  return JSON.stringify([
    extra.engine,
    request.code,
    request.language,
    request.filename ?? null,
    request.tools,
    request.seed ?? null,
    request.limits ?? null,
    request.policy ?? null,
    request.files?.length ?? 0,
    extra.startClock,
    extra.sizes ?? null,
  ]);
}

/** Run bookkeeping a resume may find after the mark: it says nothing about any call. */
const RUN_CONTROLS: ReadonlySet<string> = new Set([
  'attempt',
  'pause',
  'resume',
  'await_approval',
  'await_input',
]);

/** The mark of the last stored entry in `entries` (null when there is none, or they are not stored ones). */
export function lastMark(entries: readonly JournalEntryInput[]): JournalMark | null | undefined {
  if (entries.length === 0) return null;
  const last = metaOf(entries.at(-1));
  return typeof last.seq === 'number' && typeof last.checksum === 'string'
    ? { seq: last.seq, checksum: last.checksum }
    : undefined;
}

/** A stored entry's seq and checksum (absent on an entry not read from a store). */
function metaOf(entry: JournalEntryInput | undefined): Partial<JournalMark> {
  const meta = (entry ?? {}) as { seq?: unknown; checksum?: unknown };
  return {
    ...(typeof meta.seq === 'number' ? { seq: meta.seq } : {}),
    ...(typeof meta.checksum === 'string' ? { checksum: meta.checksum } : {}),
  };
}

/**
 * Whether the kept VM stands for this journal (ADR 0056), and if so how many of its recorded outcomes the guest
 * has been handed. It does when: the same driver and request; the journal's entry at the mark is the very one
 * (same seq and checksum: the checksum chain vouches for everything before it); and after the mark come only
 * entries about the calls that were out (their intents, outcomes, approvals and input) and the run's own
 * bookkeeping. A human's decision on a lost call, a revision, a retry or changed tools is not: then null, and
 * the task replays. The outcomes the guest was handed must be the recorded ones before every outcome of a call
 * that was out.
 */
export function resumableFrom(
  kept: KeptVm,
  now: {
    readonly driver: unknown;
    readonly fingerprint: string;
    readonly recorded: readonly JournalEntryInput[];
    readonly journalId: (callId: string) => string;
  },
): { readonly delivered: number } | null {
  if (kept.driver !== now.driver || kept.fingerprint !== now.fingerprint) return null;
  const { recorded } = now;
  const out = new Set(kept.vm.outCalls.map(now.journalId));
  let tail = 0;
  if (kept.mark !== null) {
    const { seq, checksum } = kept.mark;
    let i = recorded.length - 1;
    for (; i >= 0; i--) {
      const e = metaOf(recorded[i]);
      if (typeof e.seq !== 'number') return null;
      if (e.seq <= seq) break;
    }
    const at = metaOf(recorded[i]);
    if (at.seq !== seq || at.checksum !== checksum) return null;
    tail = i + 1;
  }
  for (let i = tail; i < recorded.length; i++) {
    const e = recorded[i];
    if (e === undefined || !aboutOutCall(e, out)) return null;
  }
  let delivered = 0;
  let pastOut = false;
  const seen = new Set<string>();
  for (const e of recorded) {
    if (e.type !== 'tool_outcome') continue;
    if (seen.has(e.data.call_id)) return null;
    seen.add(e.data.call_id);
    if (out.has(e.data.call_id)) pastOut = true;
    else if (pastOut) return null;
    else delivered += 1;
  }
  return { delivered };
}

function aboutOutCall(e: JournalEntryInput, out: ReadonlySet<string>): boolean {
  switch (e.type) {
    case 'tool_intent':
    case 'tool_outcome':
    case 'approval_request':
    case 'input_request':
    case 'input_provided':
    case 'input_timeout':
      return out.has(e.data.call_id);
    case 'approval_decision':
      return out.has(e.data.approval_id);
    case 'control':
      if (RUN_CONTROLS.has(e.data.action)) return true;
      return (
        (e.data.action === 'approved_call_started' || e.data.action === 'not_started') &&
        out.has(e.data.call_id)
      );
    default:
      return false;
  }
}
