/**
 * A tool call's id. A driver numbers an execution's calls 1, 2, ... in issue order and names them `call-N`; an
 * agent task runs one execution per step, so its journal names a call by its step too (`sK.call-N`), unique
 * over the task. Idempotency keys add the task and block (`task:block:call-N`). These strings are stored in
 * journals and sent to tools: this module is the only one that writes or reads them.
 */
export interface CallId {
  /** The driver's number for the call, from 1. */
  readonly n: number;
  /** The agent step whose execution made the call; absent for the driver's own id. */
  readonly step?: number;
}

const CALL_ID = /^(?:s(0|[1-9]\d*)\.)?call-([1-9]\d*)$/;

const stepPrefix = (step: number): string => `s${step}.`;

export function formatCallId(id: CallId): string {
  const call = `call-${id.n}`;
  return id.step === undefined ? call : callIdInStep(id.step, call);
}

/** The id these strings name, or null for a string that is not a call id. */
export function parseCallId(text: string): CallId | null {
  const m = CALL_ID.exec(text);
  if (!m?.[2]) return null;
  const n = Number(m[2]);
  const step = m[1] === undefined ? undefined : Number(m[1]);
  if (!Number.isSafeInteger(n) || (step !== undefined && !Number.isSafeInteger(step))) return null;
  return step === undefined ? { n } : { n, step };
}

/** A driver's call id as the journal of an agent task names it in `step` (`call-N` -> `sK.call-N`). */
export function callIdInStep(step: number, driverId: string): string {
  return `${stepPrefix(step)}${driverId}`;
}

/** The driver's id of a call the journal names `journalId` in `step`; null when it is not of that step. */
export function driverCallId(step: number, journalId: string): string | null {
  const prefix = stepPrefix(step);
  return journalId.startsWith(prefix) ? journalId.slice(prefix.length) : null;
}

/** The part of the idempotency keys that one execution's calls share: the task and its block (`task:block`). */
export function idempotencyScope(taskId: string, block: number): string {
  return `${taskId}:${block}`;
}

/** A tool call's idempotency key, stable across replays and restarts: `task:block:call-N`. */
export function idempotencyKey(scope: string, callId: string): string {
  return `${scope}:${callId}`;
}
