import { EncodedValue, encodeValue } from '../codec/index.ts';
import type { HostCall, HostOutcome, SerializedError } from '../spec/index.ts';

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

export function toOutcome(d: Record<string, unknown>): HostOutcome {
  const payload = String(d.payload);
  const clock = typeof d.clock === 'number' ? { clock: d.clock } : {};
  if (d.ok === true) return { ok: true, value: new EncodedValue(payload), ...clock };
  return { ok: false, error: JSON.parse(payload) as SerializedError, ...clock };
}

export function describeCall(tool: string, args: string): string {
  const shown = args.length > 120 ? `${args.slice(0, 117)}...` : args;
  return tool === 'timer' ? `setTimeout(${shown} ms)` : `${tool}(${shown})`;
}
