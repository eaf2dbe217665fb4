import { failure } from '../errors/index.ts';
import type { HostCall, SerializedError } from '../spec/index.ts';

/** Where the guest finds `input.wait`; the runner adds this binding to every durable task. */
export const INPUT_WAIT_BINDING = { namespace: 'input', name: 'wait', params: ['name', 'options'] } as const;

export function isInputWait(call: HostCall): call is HostCall & { kind: 'tool' } {
  return (
    call.kind === 'tool' &&
    call.namespace === INPUT_WAIT_BINDING.namespace &&
    call.name === INPUT_WAIT_BINDING.name
  );
}

export function parseInputWait(
  args: unknown,
): { name: string; timeoutSeconds: number | null } | { error: SerializedError } {
  const a = (args ?? {}) as { name?: unknown; options?: unknown };
  const invalid = (message: string) => ({ error: failure('TOOL_VALIDATION', `input.wait: ${message}`) });
  if (typeof a.name !== 'string' || a.name.length === 0 || a.name.length > 200) {
    return invalid('the first argument must be a name (a non-empty string of at most 200 characters)');
  }
  const options = (a.options ?? {}) as { timeoutSeconds?: unknown };
  if (typeof options !== 'object') return invalid('the second argument must be an options object');
  const t = options.timeoutSeconds;
  if (t === undefined || t === null) return { name: a.name, timeoutSeconds: null };
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) {
    return invalid('timeoutSeconds must be a positive number');
  }
  return { name: a.name, timeoutSeconds: t };
}

export function inputTimeoutError(args: unknown): SerializedError {
  const name = String((args as { name?: unknown } | null)?.name);
  return failure('INPUT_TIMEOUT', `no input "${name}" arrived before the wait timed out`);
}
