import { failure } from '../errors/index.ts';
import { encodeValue } from './value-codec.ts';

/** A tool outcome on the wire: a value or an error as tagged JSON. */
export interface EncodedOutcome {
  readonly ok: boolean;
  readonly payload: string;
}

type Outcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** Encodes a tool outcome; a result that cannot cross becomes a TOOL_RESULT_INVALID error naming `tool`. */
export function encodeOutcome(outcome: Outcome, tool: string): EncodedOutcome {
  if (!outcome.ok) return { ok: false, payload: JSON.stringify(outcome.error) };
  try {
    return { ok: true, payload: encodeValue(outcome.value, { root: 'result' }) };
  } catch (e) {
    return {
      ok: false,
      payload: JSON.stringify(
        failure(
          'TOOL_RESULT_INVALID',
          `${tool} returned a value that cannot reach the guest: ${(e as Error).message}`,
        ),
      ),
    };
  }
}
