import { EncodedValue, encodeValue } from '../codec/index.ts';
import type { HostCall, HostOutcome, JournalEntryData, SerializedError } from '../spec/index.ts';

export interface Wire {
  readonly tool: string;
  readonly args: string;
}

/** How a call is named and its arguments written in the journal; the driver's wire text when it has one. */
export function wireForm(call: HostCall): Wire {
  if (call.kind === 'timer') return { tool: 'timer', args: String(call.delayMs) };
  return {
    tool: `${call.namespace}.${call.name}`,
    args: call.argsJson ?? encodeValue(call.args, { root: 'args' }),
  };
}

/** A journaled outcome as the guest receives it. */
export function toOutcome(
  d: Pick<JournalEntryData['tool_outcome'], 'ok' | 'payload' | 'clock'>,
): HostOutcome {
  const clock = d.clock === undefined ? {} : { clock: d.clock };
  if (d.ok) return { ok: true, value: new EncodedValue(d.payload), ...clock };
  return { ok: false, error: JSON.parse(d.payload) as SerializedError, ...clock };
}

export function describeCall(tool: string, args: string): string {
  const shown = args.length > 120 ? `${args.slice(0, 117)}...` : args;
  return tool === 'timer' ? `setTimeout(${shown} ms)` : `${tool}(${shown})`;
}

/** A tool call as the tool sees it: with its idempotency key and the lease's fencing token, when there are. */
export function forTools(
  call: HostCall,
  key: string | undefined,
  fencingToken: number | undefined,
): HostCall {
  if (call.kind !== 'tool' || (key === undefined && fencingToken === undefined)) return call;
  return {
    ...call,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    ...(fencingToken === undefined ? {} : { fencingToken }),
  };
}
