import { failure } from '../errors/index.ts';
import type { HostOutcome } from '../spec/index.ts';

/** What the guest sees when the host's `call` itself threw (a broken host, not a tool's error). */
export function hostCallFailure(thrown: unknown): HostOutcome {
  return { ok: false, error: failure('TOOL_ERROR', (thrown as Error)?.message ?? String(thrown)) };
}
