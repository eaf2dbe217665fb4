import { CodecallError } from '../errors/index.ts';
import type { AttentionCallData } from '../spec/index.ts';

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
  const message =
    more.length === 0
      ? `${first.call_id}: ${first.tool} may or may not have run before the interruption and is not safe to repeat`
      : `${calls.length} calls may or may not have run before the interruption and are not safe to repeat: ${calls.map(what).join(', ')}`;
  return new CodecallError('NEEDS_ATTENTION', message, {
    details: { call_id: first.call_id, tool: first.tool, args: first.args, calls: [...calls] },
  });
}
