import { changesTheWorld, originKey } from './carry-over.ts';
import { isRecord } from './is-record.ts';
import { isBigRow, isLightRow, lightRow } from './light-row.ts';
import type { LightRow } from './light-row.ts';
import { unknownEntry } from './journal.ts';
import {
  budgetUsageOf,
  countsAgainstBudgets,
  emptyBudgetUsage,
  entryTime,
  foldBudgetUsage,
  isStoredBudgetUsage,
  storedBudgetUsage,
  touchesBudgets,
} from './tool-budgets.ts';
import type { StoredBudgetUsage } from './tool-budgets.ts';
import type { JournalEntry, JournalEntryInputOf } from './journal.ts';

/**
 * What a task's view needs of its journal, kept small and folded with each append (ADR 0035) so a view reads this
 * and the few rows it shows, never the whole journal. It names the rows whose content a view shows (by seq): their
 * content is read from the journal, verified, so the summary holds no tool arguments and cannot show any that the
 * journal does not.
 *
 * To add a field: give it a default in EMPTY_JOURNAL_SUMMARY, set it in the `case` of the entry type it comes from
 * in foldJournalSummary, and check its shape in parseJournalSummary. A field derived from entry types that older
 * journals already hold needs SUMMARY_FORMAT bumped (stored summaries of the old format are then rebuilt lazily);
 * one derived only from a new entry type does not (no summary folded before it can have seen one).
 */
export interface JournalSummary {
  /** SUMMARY_FORMAT of the fold that wrote it. */
  readonly format: number;
  /** The last entry folded: the journal's head when the summary is current; 0 and '' for an empty journal. */
  readonly seq: number;
  readonly checksum: string;
  /** `tool_outcome` entries: completed tool calls. */
  readonly toolOutcomes: number;
  /** `approval_request` entries without a decision, in the order asked. */
  readonly approvals: readonly SummaryApproval[];
  /** `input_request` entries without an answer (provided or timed out), in the order asked. */
  readonly inputs: readonly SummaryInput[];
  /**
   * The last `needs_attention` pause (the seq of its control entry) and the calls decided since; null when there
   * was none, or an `incompatible` pause came after it.
   */
  readonly attention: SummaryAttention | null;
  /** `carry_offer` entries: calls earlier attempts completed, offered to this revision (ADR 0034). */
  readonly offered: number;
  /** `tool_intent` entries with `carried_from`: calls taken over instead of run. */
  readonly carried: number;
  /** Offers of tools that change the world not taken (so far), in offer order: what a revision did not repeat. */
  readonly notRepeated: readonly SummaryOffer[];
  /**
   * Which of the rows a view reads only to anchor the journal (its first two, its head) are big (isBigRow): a view
   * does not read those (a head that is a 1 MiB outcome would cost every view its hashing). Absent when none is.
   */
  readonly bigAnchors?: readonly number[];
  /**
   * What the task used of its tool budgets (ADR 0044): calls, costs and each tool's time, folded by
   * `foldBudgetUsage` at each entry's `createdAt`. Absent until the journal holds a call that counts.
   */
  readonly usage?: StoredBudgetUsage;
}

export interface SummaryOffer {
  /** The origin's key (originKey), matched by a later `carried_from`. */
  readonly origin: string;
  /** The seq of its `carry_offer` entry. */
  readonly seq: number;
  /** The offer as a view shows it when its row is big (views then do not read it). */
  readonly light?: LightRow;
}

export interface SummaryApproval {
  readonly id: string;
  readonly seq: number;
  /** Epoch ms when it expires; null: never (for wake-ups without reading the row). */
  readonly expiresAt: number | null;
  /** The request as a view shows it when its row is big (views then do not read it). */
  readonly light?: LightRow;
}

export interface SummaryInput {
  readonly callId: string;
  readonly name: string;
  readonly seq: number;
  /** Epoch ms; null waits forever. */
  readonly deadline: number | null;
}

export interface SummaryAttention {
  readonly seq: number;
  /** Call ids an `attention_decision` was journaled for since the pause. */
  readonly decided: readonly string[];
}

/** The fold's version: a stored summary of another format is not used (it is rebuilt from the journal). */
export const SUMMARY_FORMAT = 2;

export const EMPTY_JOURNAL_SUMMARY: JournalSummary = Object.freeze({
  format: SUMMARY_FORMAT,
  seq: 0,
  checksum: '',
  toolOutcomes: 0,
  approvals: [],
  inputs: [],
  attention: null,
  offered: 0,
  carried: 0,
  notRepeated: [],
});

/** The summary after one more entry (the next in seq order). Pure; exhaustive over entry types. */
export function foldJournalSummary(summary: JournalSummary, entry: JournalEntry): JournalSummary {
  const { bigAnchors: earlier, usage: before, ...rest } = summary;
  const anchors = bigAnchors(earlier, entry);
  const usage = budgetUsage(before, entry);
  const s: JournalSummary = {
    ...rest,
    seq: entry.seq,
    checksum: entry.checksum,
    ...(anchors.length > 0 ? { bigAnchors: anchors } : {}),
    ...(usage ? { usage } : {}),
  };
  switch (entry.type) {
    case 'tool_outcome':
      return { ...s, toolOutcomes: s.toolOutcomes + 1 };
    case 'approval_request': {
      const d = entry.data;
      const light = lightRow(entry);
      const asked = {
        id: d.approval_id,
        seq: entry.seq,
        expiresAt: d.expires_at ?? null,
        ...(light ? { light } : {}),
      };
      return { ...s, approvals: [...s.approvals.filter((a) => a.id !== d.approval_id), asked] };
    }
    case 'approval_decision':
      return { ...s, approvals: s.approvals.filter((a) => a.id !== entry.data.approval_id) };
    case 'input_request': {
      const d = entry.data;
      const asked = { callId: d.call_id, name: d.name, seq: entry.seq, deadline: d.deadline };
      return { ...s, inputs: [...s.inputs.filter((i) => i.callId !== d.call_id), asked] };
    }
    case 'input_provided':
    case 'input_timeout':
      return { ...s, inputs: s.inputs.filter((i) => i.callId !== entry.data.call_id) };
    case 'attention_decision':
      return s.attention === null
        ? s
        : { ...s, attention: { ...s.attention, decided: [...s.attention.decided, entry.data.call_id] } };
    case 'control':
      return foldControl(s, entry.seq, entry.data);
    case 'carry_offer': {
      const light = lightRow(entry);
      const offer = { origin: originKey(entry.data.origin), seq: entry.seq, ...(light ? { light } : {}) };
      const notRepeated = changesTheWorld(entry.data) ? [...s.notRepeated, offer] : s.notRepeated;
      return { ...s, offered: s.offered + 1, notRepeated };
    }
    case 'tool_intent': {
      const from = entry.data.carried_from;
      if (!from) return s;
      const key = originKey(from);
      return { ...s, carried: s.carried + 1, notRepeated: s.notRepeated.filter((o) => o.origin !== key) };
    }
    case 'task_input':
    case 'manifest':
    case 'model_request':
    case 'model_reply':
    case 'code_block':
    case 'step_result':
    case 'clock':
      return s;
    default:
      return unknownEntry(entry);
  }
}

function foldControl(
  s: JournalSummary,
  seq: number,
  control: JournalEntryInputOf<'control'>['data'],
): JournalSummary {
  switch (control.action) {
    case 'needs_attention':
      return { ...s, attention: { seq, decided: [] } };
    case 'incompatible':
      return { ...s, attention: null };
    case 'attempt':
    case 'pause':
    case 'resume':
    case 'cancel':
    case 'deadline':
    case 'await_approval':
    case 'await_input':
    case 'retry':
    case 'fail':
    case 'accept_changed_tools':
    case 'approved_call_started':
    case 'retry_started':
    case 'not_started':
    case 'revision_held':
      return s;
    default:
      return unknownEntry(control);
  }
}

/** The budget usage after `entry` (a copy when it changes it); absent until a call counts. */
function budgetUsage(
  before: StoredBudgetUsage | undefined,
  entry: JournalEntry,
): StoredBudgetUsage | undefined {
  if (!touchesBudgets(entry)) return before;
  if (before === undefined && !(entry.type === 'tool_intent' && countsAgainstBudgets(entry.data)))
    return before;
  const usage = before ? budgetUsageOf(before) : emptyBudgetUsage();
  foldBudgetUsage(usage, entry, entryTime(entry.createdAt));
  return storedBudgetUsage(usage);
}

/** The big anchors once `entry` is the head: the first two rows stay anchors, an earlier head no longer is. */
function bigAnchors(earlier: readonly number[] | undefined, entry: JournalEntry): readonly number[] {
  const kept = (earlier ?? []).filter((seq) => seq <= 2 && seq !== entry.seq);
  return isBigRow(entry) ? [...kept, entry.seq] : kept;
}

/** The summary of these entries (a whole journal, or the ones after `from`'s seq), in order. */
export function summarizeJournal(
  entries: readonly JournalEntry[],
  from: JournalSummary = EMPTY_JOURNAL_SUMMARY,
): JournalSummary {
  let s = from;
  for (const entry of entries) s = foldJournalSummary(s, entry);
  return s;
}

/**
 * The seqs of the rows a view reads, in order: the first two and the last entry (anchors of the chain) unless big,
 * each pending approval's and input's request, the attention pause, each offer not repeated, except the requests
 * and offers kept light (their rows are big: the summary gives what a view shows of them). A reader verifies these
 * against the journal's chain.
 */
export function summaryRows(summary: JournalSummary): number[] {
  if (summary.seq === 0) return [];
  const big = new Set(summary.bigAnchors);
  const seqs = new Set<number>([1, Math.min(2, summary.seq), summary.seq].filter((seq) => !big.has(seq)));
  for (const a of summary.approvals) if (!a.light) seqs.add(a.seq);
  for (const i of summary.inputs) seqs.add(i.seq);
  if (summary.attention !== null) seqs.add(summary.attention.seq);
  for (const o of summary.notRepeated) if (!o.light) seqs.add(o.seq);
  return [...seqs].sort((a, b) => a - b);
}

/** A stored summary's text as a summary of this format, or null when it is not one (then it is rebuilt). */
export function parseJournalSummary(text: string): JournalSummary | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(v) || v.format !== SUMMARY_FORMAT) return null;
  const ok =
    isCount(v.seq) &&
    typeof v.checksum === 'string' &&
    isCount(v.toolOutcomes) &&
    Array.isArray(v.approvals) &&
    v.approvals.every(
      (a) =>
        isRecord(a) &&
        typeof a.id === 'string' &&
        isSeq(a.seq) &&
        isTimeOrNull(a.expiresAt) &&
        (a.light === undefined || isLightRow(a.light)),
    ) &&
    Array.isArray(v.inputs) &&
    v.inputs.every(
      (i) =>
        isRecord(i) &&
        typeof i.callId === 'string' &&
        typeof i.name === 'string' &&
        isSeq(i.seq) &&
        isTimeOrNull(i.deadline),
    ) &&
    (v.attention === null ||
      (isRecord(v.attention) &&
        isSeq(v.attention.seq) &&
        Array.isArray(v.attention.decided) &&
        v.attention.decided.every((c) => typeof c === 'string'))) &&
    isCount(v.offered) &&
    isCount(v.carried) &&
    Array.isArray(v.notRepeated) &&
    v.notRepeated.every(
      (o) =>
        isRecord(o) &&
        typeof o.origin === 'string' &&
        isSeq(o.seq) &&
        (o.light === undefined || isLightRow(o.light)),
    ) &&
    (v.bigAnchors === undefined || (Array.isArray(v.bigAnchors) && v.bigAnchors.every(isSeq))) &&
    (v.usage === undefined || isStoredBudgetUsage(v.usage));
  return ok ? (v as unknown as JournalSummary) : null;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isSeq(v: unknown): v is number {
  return isCount(v) && v > 0;
}

function isTimeOrNull(v: unknown): boolean {
  return v === null || (typeof v === 'number' && Number.isFinite(v));
}
