import { CodecallError } from '../errors/index.ts';
import type { AttentionCallData } from '../spec/index.ts';
import { describeCall } from './journal-wire.ts';

/** Why a call waits for a human: lost in an interruption, or a revision's call beside an earlier one (ADR 0034). */
function why(c: AttentionCallData): string {
  if (!c.earlier)
    return `${c.tool} may or may not have run before the interruption and is not safe to repeat`;
  const { origin, tool, args } = c.earlier;
  const where = origin.task_id === undefined ? origin.call_id : `${origin.call_id} of task ${origin.task_id}`;
  return `the revised program calls ${describeCall(c.tool, c.args)}, but an earlier attempt already ran ${describeCall(tool, args)} (${where}); it is not run again without a decision`;
}

/** NEEDS_ATTENTION naming every call in doubt (the first also as `call_id`/`tool`/`args`); null when none. */
export function attentionError(calls: readonly AttentionCallData[]): CodecallError | null {
  const [first, ...more] = calls;
  return first ? lostCallsError(first, more) : null;
}

/** NEEDS_ATTENTION for these lost unsafe calls, the first named in the message (and `details.call_id`). */
export function lostCallsError(
  first: AttentionCallData,
  more: readonly AttentionCallData[] = [],
): CodecallError {
  const calls = [first, ...more];
  const what = (c: AttentionCallData) => `${c.call_id} (${c.tool})`;
  const revised = calls.filter((c) => c.earlier);
  const message =
    more.length === 0
      ? `${first.call_id}: ${why(first)}`
      : revised.length === 0
        ? `${calls.length} calls may or may not have run before the interruption and are not safe to repeat: ${calls.map(what).join(', ')}`
        : `${calls.length} calls wait for a decision: ${calls.map(what).join(', ')}; ${revised.map((c) => `${c.call_id}: ${why(c)}`).join('; ')}`;
  return new CodecallError('NEEDS_ATTENTION', message, {
    details: { call_id: first.call_id, tool: first.tool, args: first.args, calls: [...calls] },
  });
}
