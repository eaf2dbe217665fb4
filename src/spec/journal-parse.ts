import { REFUSAL_NAMES } from './budget-types.ts';
import type { ControlAction, ControlOf } from './journal-control.ts';
import type { JournalEntryData, JournalEntryType } from './journal-entry.ts';
import type { JournalEntryInput } from './journal.ts';

interface Check {
  readonly what: string;
  test(value: unknown): boolean;
}

const check = (what: string, test: (value: unknown) => boolean): Check => ({ what, test });
const string = check('a string', (v) => typeof v === 'string');
const number = check('a number', (v) => typeof v === 'number');
const boolean = check('a boolean', (v) => typeof v === 'boolean');
const array = check('an array', (v) => Array.isArray(v));
const object = check('an object', (v) => v !== null && typeof v === 'object' && !Array.isArray(v));
const origin = check(
  'a call origin {call_id, task_id?}',
  (v) =>
    object.test(v) &&
    typeof (v as Record<string, unknown>).call_id === 'string' &&
    ['string', 'undefined'].includes(typeof (v as Record<string, unknown>).task_id),
);
const oneOf = (...values: readonly string[]) =>
  check(values.map((v) => `"${v}"`).join(' or '), (v) => values.includes(v as string));
const orNull = (c: Check) => check(`${c.what} or null`, (v) => v === null || c.test(v));
/** May be absent (JSON has no undefined: an absent field). */
const optional = (c: Check) => check(`absent or ${c.what}`, (v) => v === undefined || c.test(v));

/** A check for every field of a data shape: a field added to the type is a type error here until checked. */
type Fields<D> = { readonly [K in keyof D]-?: Check };

const ENTRY_FIELDS: { readonly [T in Exclude<JournalEntryType, 'control'>]: Fields<JournalEntryData[T]> } = {
  task_input: {
    code_hash: string,
    tools_hash: string,
    language: string,
    seed: optional(number),
    limits: optional(orNull(object)),
  },
  manifest: { tools_hash: string, engine: string, accepted: optional(string) },
  model_request: { step: number, messages: array, tools: optional(array) },
  model_reply: {
    step: number,
    content: orNull(string),
    tool_calls: array,
    finish_reason: optional(string),
    usage: optional(object),
    model: optional(string),
    violation: optional(object),
  },
  code_block: { block: number, code_hash: string, code: optional(string) },
  step_result: {
    step: number,
    ok: boolean,
    final: boolean,
    output: orNull(string),
    error: orNull(object),
    logs: array,
    calls: optional(array),
    carried: optional(number),
    not_repeated: optional(array),
  },
  tool_intent: {
    call_id: string,
    tool: string,
    args: string,
    idempotency_key: optional(string),
    carried_from: optional(origin),
    cost: optional(
      check('a number of 0 or more', (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0),
    ),
    over_budget: optional(oneOf(...REFUSAL_NAMES)),
    started_at: optional(number),
  },
  carry_offer: {
    origin,
    tool: string,
    args: string,
    payload: string,
    effect: optional(oneOf('read', 'idempotent', 'keyed', 'unsafe')),
  },
  tool_outcome: { call_id: string, ok: boolean, payload: string, clock: optional(number) },
  clock: { clock: number },
  approval_request: {
    approval_id: string,
    call_id: string,
    tool: string,
    args: string,
    roles: optional(array),
    separation: optional(boolean),
    expires_at: optional(number),
  },
  approval_decision: {
    approval_id: string,
    decision: oneOf('approve', 'reject'),
    actor: string,
    reason: optional(string),
    expired: optional(boolean),
  },
  input_request: {
    call_id: string,
    name: string,
    timeout_seconds: orNull(number),
    deadline: orNull(number),
    for_call: optional(string),
    message: optional(string),
    schema: optional(string),
  },
  input_provided: { call_id: string, name: string, value: string, actor: string },
  input_timeout: { call_id: string, name: string },
  attention_decision: {
    call_id: string,
    action: oneOf('retry', 'skip'),
    payload: optional(string),
    actor: string,
    reason: string,
  },
};

const actor = optional(string);

const CONTROL_FIELDS: { readonly [A in ControlAction]: Fields<Omit<ControlOf<A>, 'action'>> } = {
  attempt: {
    stalled: number,
    trace: optional(
      check(
        'a span {trace_id, span_id}',
        (v) =>
          object.test(v) &&
          ['trace_id', 'span_id'].every((k) => typeof (v as Record<string, unknown>)[k] === 'string'),
      ),
    ),
  },
  pause: { actor },
  resume: { actor: string },
  cancel: { actor, reason: optional(string) },
  deadline: { deadline: string },
  await_approval: { actor },
  await_input: { actor },
  needs_attention: {
    call_id: optional(orNull(string)),
    tool: optional(orNull(string)),
    args: optional(orNull(string)),
    calls: optional(
      check(
        'a list of calls {call_id, tool, args}',
        (v) =>
          Array.isArray(v) &&
          v.every(
            (c: unknown) =>
              object.test(c) &&
              ['call_id', 'tool', 'args'].every((k) => typeof (c as Record<string, unknown>)[k] === 'string'),
          ),
      ),
    ),
    actor,
  },
  retry: { code: string, retry: number, run_after: number, actor },
  incompatible: {},
  fail: { actor: string, reason: string },
  accept_changed_tools: { actor: string, reason: string },
  approved_call_started: { call_id: string },
  retry_started: { call_id: string },
  not_started: { call_id: string },
  revision_held: {
    call_id: string,
    earlier: check(
      'a call {origin, tool, args}',
      (v) =>
        object.test(v) &&
        origin.test((v as Record<string, unknown>).origin) &&
        ['tool', 'args'].every((k) => typeof (v as Record<string, unknown>)[k] === 'string'),
    ),
  },
};

function fieldProblem(what: string, data: Record<string, unknown>, fields: Record<string, Check>) {
  for (const [name, c] of Object.entries(fields)) {
    if (!c.test(data[name])) return `${what}.${name} is not ${c.what}`;
  }
  return null;
}

/**
 * What is wrong with a journal entry (its type unknown, a field missing or of another type), or null when it is
 * one of the union's members. Fields beyond the known ones are allowed: data is kept, and hashed, as written.
 */
export function journalEntryProblem(type: string, data: unknown): string | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    return `${type} data is not an object`;
  const d = data as Record<string, unknown>;
  if (type === 'control') {
    const action = d.action;
    if (typeof action !== 'string' || !Object.hasOwn(CONTROL_FIELDS, action))
      return `control action ${JSON.stringify(action) ?? 'undefined'} is not known`;
    return fieldProblem(`control ${action}`, d, CONTROL_FIELDS[action as ControlAction]);
  }
  if (!Object.hasOwn(ENTRY_FIELDS, type)) return `entry type ${JSON.stringify(type)} is not known`;
  return fieldProblem(type, d, ENTRY_FIELDS[type as Exclude<JournalEntryType, 'control'>]);
}

/** The entry as its union member, or the reason it is none (see `journalEntryProblem`). */
export function parseJournalEntry(
  type: string,
  data: unknown,
): { readonly entry: JournalEntryInput } | { readonly problem: string } {
  const problem = journalEntryProblem(type, data);
  return problem === null ? { entry: { type, data } as JournalEntryInput } : { problem };
}
